// One sendfile(2) transfer: a byte range of a file moved to a destination
// descriptor in bounded chunks on libuv's thread pool, settling a Promise.
// An optional head (bytes from memory, an HTTP response head say) is written
// first; on a socket it leaves in the same packet as the file's first bytes.
#pragma once

#include <napi.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "unique_fd.h"

namespace zcopy {

// How the private destination descriptor takes bytes; decided once, at start.
enum class Sink {
  kFile,    // regular file or anything blocking: the pool thread writes, bounded per chunk
  kStream,  // non-blocking socket or pipe: EAGAIN waits for writability on the event loop
};

class Transfer : public Napi::ObjectWrap<Transfer> {
 public:
  static Napi::Function Init(Napi::Env env);

  // new Transfer(outFd, inFd, offset, length, chunkSize, onProgress?, head?)
  explicit Transfer(const Napi::CallbackInfo& info);

 private:
  // What one pool job did; written on the pool thread, read in AfterWork.
  struct ChunkResult {
    size_t head_moved = 0;  // bytes of the head written
    int64_t moved = 0;      // bytes of the file sent
    int error = 0;       // errno of a failed sendfile
    bool eof = false;    // the source ended before the range did
    bool again = false;  // the destination is full (EAGAIN)
  };

  Napi::Value Start(const Napi::CallbackInfo& info);
  void Abort(const Napi::CallbackInfo& info);
  Napi::Value HeadWritten(const Napi::CallbackInfo& info);
  Napi::Value Settled(const Napi::CallbackInfo& info);

  int OpenDescriptors();
  void QueueChunk();
  void WaitWritable();
  bool SendEagerly();
  void EnsureAsyncContext();
  ChunkResult RunChunk(int out, int in, int64_t max_bytes) const;
  bool WriteHead(int out, ChunkResult* result) const;
  // Whether bytes are left to move, counting those in `pending` (a chunk result
  // not yet accounted for by OnChunkDone) as moved.
  bool HasWork(const ChunkResult& pending) const {
    return remaining_ > pending.moved || head_written_ + pending.head_moved < head_length_;
  }
  bool HasWork() const { return HasWork(ChunkResult()); }
  void OnChunkDone();
  void Finish(Napi::Value error);
  void ReleaseIfDone();

  static void WorkCallback(uv_work_t* req);
  static void AfterWorkCallback(uv_work_t* req, int status);
  static void PollCallback(uv_poll_t* handle, int status, int events);
  static void PollCloseCallback(uv_handle_t* handle);

  enum class State { kCreated, kWorking, kPolling, kDone };

  const int out_arg_;
  const int in_arg_;
  int64_t offset_;
  int64_t remaining_;
  int64_t done_ = 0;
  const int64_t chunk_;

  UniqueFd out_;
  UniqueFd in_;
  Sink sink_ = Sink::kFile;

  State state_ = State::kCreated;
  std::atomic<bool> aborted_{false};
  bool referenced_ = false;
  bool poll_open_ = false;
  int poll_error_ = 0;  // errno of the last failed writability wait

  Napi::FunctionReference on_progress_;
  Napi::Reference<Napi::Buffer<char>> head_ref_;  // keeps head_ alive until Finish
  const char* head_ = nullptr;
  size_t head_length_ = 0;
  size_t head_written_ = 0;
  std::unique_ptr<Napi::Promise::Deferred> deferred_;
  std::unique_ptr<Napi::AsyncContext> async_context_;

  uv_loop_t* loop_ = nullptr;
  uv_work_t work_{};
  uv_poll_t poll_{};
  ChunkResult result_;
};

}  // namespace zcopy
