// A handle scope plus, when the transfer has an async context, a callback scope
// (microtasks, async_hooks) for code that runs from a libuv callback.
#pragma once

#include <node_api.h>

namespace zcopy {

class LoopScope {
 public:
  LoopScope(napi_env env, napi_async_context context) : env_(env) {
    if (napi_open_handle_scope(env, &handle_scope_) != napi_ok) handle_scope_ = nullptr;
    napi_value resource = nullptr;
    if (context != nullptr && napi_create_object(env, &resource) == napi_ok &&
        napi_open_callback_scope(env, resource, context, &callback_scope_) != napi_ok) {
      callback_scope_ = nullptr;
    }
  }
  ~LoopScope() {
    if (callback_scope_ != nullptr) napi_close_callback_scope(env_, callback_scope_);
    if (handle_scope_ != nullptr) napi_close_handle_scope(env_, handle_scope_);
  }
  LoopScope(const LoopScope&) = delete;
  LoopScope& operator=(const LoopScope&) = delete;

 private:
  napi_env env_;
  napi_handle_scope handle_scope_ = nullptr;
  napi_callback_scope callback_scope_ = nullptr;
};

}  // namespace zcopy
