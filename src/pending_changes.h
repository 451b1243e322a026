// Whether the event loop's inotify queue holds events libuv has not read yet
// (see pending_changes.cc), and changesPending(), JavaScript's way to ask.
#pragma once

#include <napi.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "unique_fd.h"

namespace zcopy {

struct IoUringCqe;
struct IoUringSqe;

// A loop's inotify queue as its askers see it (the open-file cache's
// changesPending(), each native lane): one per loop, shared (LoopQueue
// below). Queued() → 1 events wait, 0 none (or no watch on this loop yet),
// -1 it cannot be told. Where io_uring allows it, a multishot poll of the
// inotify descriptor posts a completion for each event, so the answer "none
// since the queue was last found empty" is a read of memory; otherwise, and
// whenever a completion came, FIONREAD asks the kernel.
class InotifyQueue {
 public:
  InotifyQueue() = default;
  ~InotifyQueue() { CloseRing(); }
  InotifyQueue(const InotifyQueue&) = delete;
  InotifyQueue& operator=(const InotifyQueue&) = delete;

  int Queued(uv_loop_t* loop);
  // Proves the loop's inotify descriptor and arms the ring for it, where that
  // was not done yet: → false when the loop has none yet or it cannot be
  // proven. Queued() does it first; an asker calls it early (once a watch or
  // a row is set) so that the ring's descriptor is there from then on, not
  // from its first ask.
  bool Prepare(uv_loop_t* loop);

 private:
  void OpenRing();
  void CloseRing();
  bool Arm();
  bool Drain();

  int proven_fd_ = -1;  // the descriptor last proven to be the loop's inotify instance
  bool dirty_ = true;   // events may wait: FIONREAD tells
  UniqueFd ring_;
  void* ring_map_ = nullptr;
  size_t ring_size_ = 0;
  void* sqes_map_ = nullptr;
  size_t sqes_size_ = 0;
  uint32_t* sq_tail_ = nullptr;
  uint32_t* sq_mask_ = nullptr;
  uint32_t* sq_array_ = nullptr;
  uint32_t* sq_flags_ = nullptr;
  IoUringSqe* sqes_ = nullptr;
  uint32_t* cq_head_ = nullptr;
  uint32_t* cq_tail_ = nullptr;
  uint32_t* cq_mask_ = nullptr;
  IoUringCqe* cqes_ = nullptr;
};

// The queue of `loop`, made by its first asker and freed when the last lets
// go (on the loop's thread: an environment's cleanup, a lane's end). Null if
// memory ran out.
InotifyQueue* AcquireLoopQueue(uv_loop_t* loop);
void ReleaseLoopQueue(uv_loop_t* loop);

Napi::Function ChangesPendingFunction(Napi::Env env);

}  // namespace zcopy
