// The per-environment registry of transfers that libuv holds (a queued pool job
// or an open poll handle). Plain heap memory, created at module Init
// (Transfer::Init, transfer.cc), freed by its own cleanup hook once the
// environment is closing and the last transfer has let go of libuv; napi
// instance data could be freed before that.
#pragma once

#include <node_api.h>
#include <uv.h>

namespace zcopy {

class TransferCore;

struct EnvRegistry {
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_async_cleanup_hook_handle hook = nullptr;
  TransferCore* first = nullptr;
  bool closing = false;

  void Add(TransferCore* core);
  void Remove(TransferCore* core);  // may delete the registry
  void DeleteIfDone();

  static void OnEnvTeardown(napi_async_cleanup_hook_handle handle, void* data);
};

}  // namespace zcopy
