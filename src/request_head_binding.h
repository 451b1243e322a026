// parseRequestHead(buffer): ParseRequestHead (request_head.h) for the tests of
// the parser (see request_head_binding.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function ParseRequestHeadFunction(Napi::Env env);

}  // namespace zcopy
