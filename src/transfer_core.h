// TransferCore: one sendfile(2) transfer's state machine, plain C++ (see
// transfer.h for the two objects of a transfer and their lifetimes). It owns the
// private dups, the uv_work_t and uv_poll_t, a native copy of the head and the
// paths, the promise's deferred; the JS wrapper (Transfer, transfer.cc) holds
// only a pointer to it, and its environment's registry (env_registry.h) every
// core that libuv holds.
#pragma once

#include <node_api.h>
#include <uv.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "copy_range.h"
#include "descriptors.h"
#include "env_registry.h"
#include "unique_fd.h"

namespace zcopy {

// What a transfer moves, as the JS wrapper read it from its options (see
// transfer.h). An end given as a path has -1 as its descriptor.
struct TransferSpec {
  int out_fd = -1;
  int in_fd = -1;
  int64_t offset = -1;
  int64_t length = -1;  // with a source path, fixed once the source is open
  int64_t chunk_size = 0;
  const char* head = nullptr;  // the caller's bytes, copied by TransferCore::New
  size_t head_length = 0;
  Path source_path;
  Path destination_path;
  int64_t end = -1;  // with a source path: the range's last byte (inclusive), -1 for the end of the file
};

class TransferCore {
 public:
  // The head's bytes, and the paths of ends to open (see OpenSpec), are copied
  // into the same allocation: the pool thread never reads JS memory. Null when
  // out of memory.
  static TransferCore* New(EnvRegistry* registry, const TransferSpec& spec) {
    const size_t paths = spec.source_path.Size() + spec.destination_path.Size();
    void* memory = ::operator new(sizeof(TransferCore) + spec.head_length + paths, std::nothrow);
    if (memory == nullptr) return nullptr;
    auto* core = new (memory) TransferCore(registry, spec);
    if (spec.head_length > 0) std::memcpy(core->HeadBytes(), spec.head, spec.head_length);
    char* at = core->HeadBytes() + spec.head_length;
    core->open_spec_.source_path = spec.source_path.CopyTo(&at);
    core->open_spec_.destination_path = spec.destination_path.CopyTo(&at);
    core->open_spec_.start = spec.offset;
    core->open_spec_.end = spec.end;
    core->opens_ = spec.source_path.given || spec.destination_path.given;
    return core;
  }

  TransferCore(const TransferCore&) = delete;
  TransferCore& operator=(const TransferCore&) = delete;

  void SetProgress(napi_env env, napi_value callback) {
    if (napi_create_reference(env, callback, 1, &on_progress_) != napi_ok) on_progress_ = nullptr;
  }

  napi_value Start(napi_env env);
  void Abort(napi_env env);
  // The JS wrapper is gone; a running transfer goes on and settles its promise.
  void Detach() { Release(); }

  size_t head_written() const { return head_written_; }
  bool settled() const { return state_ == State::kDone; }
  // The descriptors this transfer opened by path and kept for JavaScript (see
  // Finish), now the caller's; -1 for none.
  void TakeOpened(int* in, int* out) {
    *in = state_ == State::kDone && open_spec_.source_path != nullptr ? in_.Release() : -1;
    *out = state_ == State::kDone && open_spec_.destination_path != nullptr ? out_.Release() : -1;
  }

 private:
  friend struct EnvRegistry;

  enum class State : uint8_t { kCreated, kStarting, kWorking, kPolling, kDone };
  enum class Outcome : uint8_t { kDone, kAborted, kSystemError, kTruncated, kThrown, kNotRegular };
  // A transfer given paths opens them in its first pool job (kOpening). An abort
  // that comes while that job has not got past opening the source (a FIFO
  // waiting for a writer) takes the job over (kAbandoned): the promise settles
  // at once, and the job closes the source when its open() returns, and opens
  // nothing more. Otherwise the job owns the transfer from then on (kOpened):
  // the destination is created or truncated before the promise settles, never
  // after, and not at all after an abort. One atomic decides, on either thread.
  enum OpenPhase : uint8_t { kNoOpen, kOpening, kOpened, kAbandoned };

  // What one pool job did; written on the pool thread, read in AfterWork.
  struct ChunkResult {
    size_t head_moved = 0;  // bytes of the head written
    int64_t moved = 0;      // bytes of the file sent
    int error = 0;          // errno of a failed sendfile
    bool eof = false;       // the source ended before the range did
    bool again = false;     // the destination is full (EAGAIN)
    bool slow = false;      // a wait in the pool timed out: the reader is slow
  };

  TransferCore(EnvRegistry* registry, const TransferSpec& spec)
      : registry_(registry),
        env_(registry->env),
        out_arg_(spec.out_fd),
        in_arg_(spec.in_fd),
        offset_(spec.offset),
        remaining_(spec.length),
        chunk_(spec.chunk_size),
        head_length_(spec.head_length) {}

  ~TransferCore() { DropNapi(); }

  char* HeadBytes() { return reinterpret_cast<char*>(this + 1); }
  const char* HeadBytes() const { return reinterpret_cast<const char*>(this + 1); }

  // Lifetime: one hold for the JS wrapper, one per libuv owner (queued work,
  // open poll handle). The last release deletes the core.
  void Retain() { ++holds_; }
  void Release() {
    if (--holds_ == 0) {
      this->~TransferCore();
      ::operator delete(this);
    }
  }
  // A libuv owner let go: leaves the registry once libuv holds nothing.
  void LibuvReleased() {
    if (!work_pending_ && !poll_open_ && registered_) {
      registered_ = false;
      registry_->Remove(this);
    }
    Release();
  }
  void Register() {
    if (!registered_) {
      registered_ = true;
      registry_->Add(this);
    }
  }

  int DuplicateDescriptors();
  bool SendEagerly(napi_env env);
  void QueueChunk(napi_env env);
  void SendNext(napi_env env);
  void WaitWritable(napi_env env);
  void EnsureAsyncContext(napi_env env);
  ChunkResult RunChunk(int out, int in, int64_t max_bytes, uint64_t deadline = 0, bool may_wait = false);
  bool OpenPathsInPool();
  void CloseIfFinished();
  // Whether a failure leaves the descriptors this transfer opened to JavaScript
  // (lib/engine/pipe-file.js copies with them when the kernel cannot).
  bool KeepsForJs(int error, int64_t moved) const {
    return opens_ && open_error_ == 0 && IsUnsupported(error) && done_ + moved == 0;
  }
  bool WriteHead(int out, ChunkResult* result) const;
  bool HasWork(const ChunkResult& pending) const {
    return remaining_ > pending.moved || head_written_ + pending.head_moved < head_length_;
  }
  bool HasWork() const { return HasWork(ChunkResult()); }
  bool Aborted() const { return aborted_.load(std::memory_order_relaxed); }
  void OnChunkDone(napi_env env);
  void Finish(napi_env env, Outcome outcome, int error = 0, const char* syscall = nullptr, napi_value thrown = nullptr);
  void ClosePoll();
  void DropNapi();
  void OnEnvClosing();

  static void WorkCallback(uv_work_t* req);
  static void AfterWorkCallback(uv_work_t* req, int status);
  static void PollCallback(uv_poll_t* handle, int status, int events);
  static void PollCloseCallback(uv_handle_t* handle);

  EnvRegistry* const registry_;
  const napi_env env_;
  TransferCore* prev_ = nullptr;  // registry links
  TransferCore* next_ = nullptr;

  const int out_arg_;
  const int in_arg_;
  int64_t offset_;
  int64_t remaining_;
  int64_t done_ = 0;
  const int64_t chunk_;
  const size_t head_length_;
  size_t head_written_ = 0;

  UniqueFd out_;
  UniqueFd in_;
  Destination destination_;        // out_arg_ described at start, when it is given
  bool source_sent_from_ = false;  // the eager path moved file bytes from in_arg_
  Sink sink_ = Sink::kFile;
  CopyMethod method_ = CopyMethod::kSendfile;  // see CopyChunk

  // Ends given as paths (opens_), opened by the first pool job; what that open
  // found is written there and read on the event loop after it.
  OpenSpec open_spec_;
  bool opens_ = false;
  std::atomic<uint8_t> open_phase_{kNoOpen};
  bool not_regular_ = false;
  int open_error_ = 0;
  const char* open_syscall_ = nullptr;
  const char* open_path_ = nullptr;

  State state_ = State::kCreated;
  std::atomic<bool> aborted_{false};
  int holds_ = 1;  // the wrapper's
  bool registered_ = false;
  bool work_pending_ = false;
  bool poll_open_ = false;
  bool poll_closing_ = false;
  bool env_closing_ = false;
  int poll_error_ = 0;  // errno of the last failed writability wait
  // Whether a pool job may wait for a full socket or pipe (kPoolWaitNs): yes
  // once the event loop saw the destination writable again within kPoolWaitNs
  // of waiting for it, no after a wait in the pool timed out. Not at first: a
  // response that fits in the socket buffer never waits, and a reader of
  // unknown speed (a client busy with other connections) costs no pool time.
  bool waits_in_pool_ = false;
  uint64_t poll_started_ = 0;  // uv_hrtime() when the loop began to wait

  napi_ref on_progress_ = nullptr;
  napi_deferred deferred_ = nullptr;
  napi_async_context async_context_ = nullptr;

  uv_work_t work_{};
  uv_poll_t poll_{};
  ChunkResult result_;
  // The head's bytes follow the object (see New).
};

}  // namespace zcopy
