#include "errors.h"

#include <uv.h>

#include <string>

namespace zcopy {

namespace {

Napi::Error WithCode(Napi::Env env, const std::string& message, const char* code) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  return error;
}

}  // namespace

Napi::Error SystemError(Napi::Env env, int err, const char* syscall) {
  const char* code = uv_err_name(-err);
  std::string message = std::string(code) + ": " + uv_strerror(-err) + ", " + syscall;
  Napi::Error error = WithCode(env, message, code);
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", Napi::String::New(env, syscall));
  return error;
}

Napi::Error TruncatedError(Napi::Env env, int64_t offset, int64_t missing) {
  std::string message = "Source file ended at byte " + std::to_string(offset) + " with " +
                        std::to_string(missing) +
                        " bytes of the requested range unsent (was it truncated?)";
  Napi::Error error = WithCode(env, message, "ERR_ZCOPY_TRUNCATED");
  error.Set("syscall", Napi::String::New(env, "sendfile"));
  return error;
}

Napi::Error AbortedError(Napi::Env env) {
  Napi::Error error = WithCode(env, "The operation was aborted", "ABORT_ERR");
  error.Set("name", Napi::String::New(env, "AbortError"));
  return error;
}

}  // namespace zcopy
