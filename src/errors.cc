#include "errors.h"

#include <uv.h>

#include <string>

namespace zcopy {

namespace {

napi_value String(napi_env env, const std::string& text) {
  napi_value value = nullptr;
  if (napi_create_string_utf8(env, text.data(), text.size(), &value) != napi_ok) return nullptr;
  return value;
}

// Sets `key` when `value` could be made; an error without one of its properties
// is still the right error to settle with.
void SetProperty(napi_env env, napi_value object, const char* key, napi_value value) {
  if (value != nullptr) napi_set_named_property(env, object, key, value);
}

napi_value WithCode(napi_env env, const std::string& message, const char* code) {
  napi_value code_value = String(env, code);
  napi_value message_value = String(env, message);
  napi_value error = nullptr;
  if (code_value == nullptr || message_value == nullptr ||
      napi_create_error(env, code_value, message_value, &error) != napi_ok) {
    return nullptr;
  }
  return error;
}

}  // namespace

napi_value SystemError(napi_env env, int err, const char* syscall, const char* path) {
  const char* code = uv_err_name(-err);
  std::string message = std::string(code) + ": " + uv_strerror(-err) + ", " + syscall;
  if (path != nullptr) message += std::string(" '") + path + "'";
  napi_value error = WithCode(env, message, code);
  if (error == nullptr) return nullptr;
  napi_value errno_value = nullptr;
  if (napi_create_int32(env, -err, &errno_value) == napi_ok) SetProperty(env, error, "errno", errno_value);
  SetProperty(env, error, "syscall", String(env, syscall));
  if (path != nullptr) SetProperty(env, error, "path", String(env, path));
  return error;
}

napi_value TruncatedError(napi_env env, int64_t offset, int64_t missing) {
  std::string message = "Source file ended at byte " + std::to_string(offset) + " with " + std::to_string(missing) +
                        " bytes of the requested range unsent (was it truncated?)";
  napi_value error = WithCode(env, message, "ERR_ZCOPY_TRUNCATED");
  if (error != nullptr) SetProperty(env, error, "syscall", String(env, "sendfile"));
  return error;
}

napi_value AbortedError(napi_env env) {
  napi_value error = WithCode(env, "The operation was aborted", "ABORT_ERR");
  if (error != nullptr) SetProperty(env, error, "name", String(env, "AbortError"));
  return error;
}

napi_value NotRegularError(napi_env env) {
  return WithCode(env, "Not a regular file: handed to the JavaScript copy", "ERR_ZCOPY_NOT_REGULAR");
}

}  // namespace zcopy
