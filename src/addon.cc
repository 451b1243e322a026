// zcopy native addon: exports the Transfer class (see transfer.h).
#include <napi.h>

#include "transfer.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Transfer", zcopy::Transfer::Init(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(zcopy, Init)
