#include "env_registry.h"

#include "transfer_core.h"

namespace zcopy {

void EnvRegistry::Add(TransferCore* core) {
  core->prev_ = nullptr;
  core->next_ = first;
  if (first != nullptr) first->prev_ = core;
  first = core;
}

void EnvRegistry::Remove(TransferCore* core) {
  if (core->prev_ != nullptr) {
    core->prev_->next_ = core->next_;
  } else {
    first = core->next_;
  }
  if (core->next_ != nullptr) core->next_->prev_ = core->prev_;
  core->prev_ = core->next_ = nullptr;
  DeleteIfDone();
}

void EnvRegistry::DeleteIfDone() {
  if (!closing || first != nullptr) return;
  napi_remove_async_cleanup_hook(hook);  // lets the environment's teardown go on
  delete this;
}

// The environment is being torn down: its JS will never run again. Every
// transfer libuv holds is aborted; poll handles are closed now, pool jobs end at
// their next sendfile call. The hook is removed when the last one has let go.
void EnvRegistry::OnEnvTeardown(napi_async_cleanup_hook_handle /*handle*/, void* data) {
  auto* self = static_cast<EnvRegistry*>(data);
  self->closing = true;
  napi_handle_scope scope = nullptr;
  if (napi_open_handle_scope(self->env, &scope) != napi_ok) scope = nullptr;
  for (TransferCore* core = self->first; core != nullptr;) {
    TransferCore* next = core->next_;
    core->OnEnvClosing();
    core = next;
  }
  if (scope != nullptr) napi_close_handle_scope(self->env, scope);
  self->DeleteIfDone();
}

}  // namespace zcopy
