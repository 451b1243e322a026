// One sendfile(2) transfer: a byte range of a file moved to a destination
// descriptor by bounded jobs on libuv's thread pool, settling a Promise. A job
// to a file moves one chunk; a job to a socket or pipe sends for a few
// milliseconds, waiting briefly in the pool for a reader that keeps up (a
// reader that does not is waited for on the event loop).
// An optional head (bytes from memory, an HTTP response head say) is written
// first; on a socket it leaves in the same packet as the file's first bytes.
//
// Two objects per transfer:
//  - TransferCore (transfer_core.h), plain C++: the state machine, the private
//    dups, the uv_work_t and uv_poll_t, a native copy of the head, the
//    promise's deferred. It lives while anything refers to it (the JS wrapper, a queued
//    pool job, an open poll handle, a callback on the stack) and deletes itself
//    after the last of them, so libuv never sees freed memory whatever the GC does.
//  - Transfer, the JS-facing Napi::ObjectWrap: only a pointer to its core,
//    detached in its destructor.
// Every core that libuv holds is in its environment's registry; at environment
// teardown (a Worker terminated, process exit) one async cleanup hook aborts
// them, closes their handles and descriptors, waits for in-flight pool jobs and
// never calls into that environment's JS again.
//
// The files of a transfer: transfer.h/.cc this wrapper and its options;
// transfer_core.h/.cc the state machine; env_registry.h/.cc the registry and
// its teardown hook; descriptors.h/.cc what is asked of the given descriptors,
// their private duplicates and the ends given as paths; copy_range.h/.cc the
// file-to-file copy; loop_scope.h the scopes of a libuv callback; tuning.h the
// figures it is tuned by.
#pragma once

#include <napi.h>

namespace zcopy {

class TransferCore;
struct EnvRegistry;

class Transfer : public Napi::ObjectWrap<Transfer> {
 public:
  // The Transfer class for `env`; registers the environment's cleanup hook.
  static Napi::Function Init(Napi::Env env);

  // new Transfer({ outFd, inFd, offset, length, chunkSize, onProgress?, head?,
  //                sourcePath?, destinationPath?, end? })
  explicit Transfer(const Napi::CallbackInfo& info);
  ~Transfer() override;

  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

 private:
  Napi::Value Start(const Napi::CallbackInfo& info);
  void Abort(const Napi::CallbackInfo& info);
  Napi::Value HeadWritten(const Napi::CallbackInfo& info);
  Napi::Value Settled(const Napi::CallbackInfo& info);
  Napi::Value TakeOpened(const Napi::CallbackInfo& info);

  TransferCore* core_ = nullptr;
};

}  // namespace zcopy
