// changesPending() → true, false, or null when it cannot be told.
//
// fs.watch on Linux is libuv's inotify: one inotify descriptor per event loop,
// read when the loop polls it. A request read from a socket earlier in the same
// poll batch is answered before a change that happened before it was sent is
// read (epoll reports descriptors in the order they became ready, and a socket
// reported in the previous turn is re-queued ahead of the rest). The open-file
// cache answers a remembered path with no stat while watches vouch for it
// (lib/http/files/remembered-paths.js), and the native lane answers its rows;
// before they do, they ask here whether the loop's inotify queue holds unread
// events: then the request looks its name up as a miss does, on the pool, and
// the events are read meanwhile.
//
// The descriptor is libuv's `inotify_fd` loop field (uv/linux.h, part of the
// uv_loop_t layout that libuv keeps ABI-stable across 1.x). It is used only once
// /proc/self/fd says the number names an inotify instance; -1 (no watch set
// yet on this loop) answers false: nothing is remembered without a watch.
//
// Asking the kernel (ioctl FIONREAD) costs a system call on every request
// (0.3-1.4 us on the 2-core VMs of docs/benchmarks-log.md). So the loop's
// queue keeps a small io_uring with a multishot poll on the descriptor: every event
// queued wakes the poll, whose completion the kernel posts in the ring as
// task work of the thread that armed it, the loop's, before that thread next
// returns to user space. A request sent after a change is read by a system
// call of that thread after the change, so its completion is in the ring by
// then: an empty ring, since the queue was last found empty, means no event,
// with no system call. A completion (or an ended poll) sends the check back
// to FIONREAD until the queue is found empty again; completions are consumed
// before that ioctl, so one posted meanwhile is seen next time. The loop's
// askers share the queue and its ring: whichever finds the queue empty
// clears the mark for all, which is the queue's own truth. Where
// io_uring cannot be had (kernel.io_uring_disabled, a seccomp profile, a
// kernel before 5.13) or ZCOPY_IO_URING=0, FIONREAD answers every time.
#include "pending_changes.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "linux_abi.h"

namespace zcopy {

namespace {

// Whether `fd` is an inotify instance (/proc/self/fd/N → "anon_inode:inotify").
bool IsInotify(int fd) {
  char link[32];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[64];
  const ssize_t length = readlink(link, target, sizeof target - 1);
  if (length < 0) return false;
  target[length] = '\0';
  return std::strcmp(target, "anon_inode:inotify") == 0;
}

// ZCOPY_IO_URING=0 keeps every asker on FIONREAD.
bool RingAllowed() {
  const char* value = std::getenv("ZCOPY_IO_URING");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

constexpr uint32_t kSqEntries = 2;
constexpr uint32_t kCqEntries = 16;  // more events between two asks overflow: the poll ends, and is armed again

// The loops' queues (Workers run loops of their own, on their own threads).
struct LoopQueue {
  uv_loop_t* loop;
  InotifyQueue queue;
  int users;
  LoopQueue* next;
};
std::mutex loop_queues_lock;
LoopQueue* loop_queues = nullptr;

// Per environment: its loop and its hold on the loop's queue, for
// changesPending(). Freed by the environment's cleanup hook.
struct LoopInotify {
  uv_loop_t* loop = nullptr;
  InotifyQueue* queue = nullptr;
};

void FreeLoopInotify(void* data) {
  auto* state = static_cast<LoopInotify*>(data);
  ReleaseLoopQueue(state->loop);
  delete state;
}

Napi::Value ChangesPendingJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* state = static_cast<LoopInotify*>(info.Data());
  if (state == nullptr) return env.Null();
  const int queued = state->queue->Queued(state->loop);
  return queued < 0 ? env.Null() : Napi::Boolean::New(env, queued > 0);
}

}  // namespace

bool InotifyQueue::Prepare(uv_loop_t* loop) {
  const int fd = loop->inotify_fd;
  if (fd < 0) return false;
  if (fd == proven_fd_) return true;
  CloseRing();
  if (!IsInotify(fd)) return false;
  proven_fd_ = fd;
  dirty_ = true;
  if (RingAllowed()) OpenRing();
  return true;
}

int InotifyQueue::Queued(uv_loop_t* loop) {
  if (!Prepare(loop)) return loop->inotify_fd < 0 ? 0 : -1;
  const int fd = proven_fd_;
  if (ring_.Valid() && !Drain() && !dirty_) return 0;
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0) return -1;
  dirty_ = queued > 0;
  return queued > 0 ? 1 : 0;
}

// A ring of its own (the descriptor is close-on-exec) with the poll armed;
// left closed where the kernel refuses any of it.
void InotifyQueue::OpenRing() {
  IoUringParams params{};
  params.flags = kIoringSetupCqsize;
  params.cq_entries = kCqEntries;
  const long fd = ::syscall(__NR_io_uring_setup, kSqEntries, &params);
  if (fd < 0) return;
  ring_ = UniqueFd(static_cast<int>(fd));
  if ((params.features & kIoringFeatSingleMmap) == 0) return CloseRing();
  const size_t sq_size = params.sq_off.array + params.sq_entries * sizeof(uint32_t);
  const size_t cq_size = params.cq_off.cqes + params.cq_entries * sizeof(IoUringCqe);
  ring_size_ = sq_size > cq_size ? sq_size : cq_size;
  void* ring = ::mmap(nullptr, ring_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_.Get(),
                      static_cast<off_t>(kIoringOffSqRing));
  if (ring == MAP_FAILED) return CloseRing();
  ring_map_ = ring;
  sqes_size_ = params.sq_entries * sizeof(IoUringSqe);
  void* sqes = ::mmap(nullptr, sqes_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_.Get(),
                      static_cast<off_t>(kIoringOffSqes));
  if (sqes == MAP_FAILED) return CloseRing();
  sqes_map_ = sqes;
  auto* base = static_cast<char*>(ring);
  sq_tail_ = reinterpret_cast<uint32_t*>(base + params.sq_off.tail);
  sq_mask_ = reinterpret_cast<uint32_t*>(base + params.sq_off.ring_mask);
  sq_array_ = reinterpret_cast<uint32_t*>(base + params.sq_off.array);
  sq_flags_ = reinterpret_cast<uint32_t*>(base + params.sq_off.flags);
  sqes_ = static_cast<IoUringSqe*>(sqes);
  cq_head_ = reinterpret_cast<uint32_t*>(base + params.cq_off.head);
  cq_tail_ = reinterpret_cast<uint32_t*>(base + params.cq_off.tail);
  cq_mask_ = reinterpret_cast<uint32_t*>(base + params.cq_off.ring_mask);
  cqes_ = reinterpret_cast<IoUringCqe*>(base + params.cq_off.cqes);
  if (!Arm()) CloseRing();
}

// Unmapped and closed: the kernel cancels the poll with the ring.
void InotifyQueue::CloseRing() {
  if (sqes_map_ != nullptr) ::munmap(sqes_map_, sqes_size_);
  if (ring_map_ != nullptr) ::munmap(ring_map_, ring_size_);
  sqes_map_ = ring_map_ = nullptr;
  ring_.Reset();
}

// Submits the multishot poll of the inotify descriptor. Events queued
// before it was armed posted nothing: FIONREAD tells of them.
bool InotifyQueue::Arm() {
  const uint32_t tail = *sq_tail_;
  const uint32_t index = tail & *sq_mask_;
  IoUringSqe* sqe = &sqes_[index];
  std::memset(sqe, 0, sizeof *sqe);
  sqe->opcode = kIoringOpPollAdd;
  sqe->fd = proven_fd_;
  sqe->len = kIoringPollAddMulti;
  sqe->poll32_events = POLLIN;
  sq_array_[index] = index;
  __atomic_store_n(sq_tail_, tail + 1, __ATOMIC_RELEASE);
  dirty_ = true;
  return ::syscall(__NR_io_uring_enter, ring_.Get(), 1, 0, 0, nullptr, 0) == 1;
}

// Consumes the completions posted since the last ask → whether there were
// any. A poll that ended (its last completion lacks IORING_CQE_F_MORE: the
// completion queue overflowed) is armed again; one the kernel refused (an
// error: no multishot poll before Linux 5.13) closes the ring for good.
bool InotifyQueue::Drain() {
  bool any = false;
  bool ended = false;
  bool refused = false;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t head = *cq_head_;
    const uint32_t tail = __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE);
    for (; head != tail; head++) {
      const IoUringCqe& cqe = cqes_[head & *cq_mask_];
      any = true;
      if ((cqe.flags & kIoringCqeFMore) == 0) {
        ended = true;
        refused = refused || cqe.res < 0;
      }
    }
    __atomic_store_n(cq_head_, head, __ATOMIC_RELEASE);
    // Completions the full queue could not take wait in the kernel's
    // overflow list until an enter flushes them into the queue.
    if ((__atomic_load_n(sq_flags_, __ATOMIC_ACQUIRE) & kIoringSqCqOverflow) == 0) break;
    ::syscall(__NR_io_uring_enter, ring_.Get(), 0, 0, kIoringEnterGetevents, nullptr, 0);
  }
  if (refused || (ended && !Arm())) {
    CloseRing();  // FIONREAD from now on, for this descriptor
    dirty_ = true;
  }
  return any;
}

InotifyQueue* AcquireLoopQueue(uv_loop_t* loop) {
  std::lock_guard<std::mutex> hold(loop_queues_lock);
  for (LoopQueue* entry = loop_queues; entry != nullptr; entry = entry->next) {
    if (entry->loop == loop) {
      entry->users++;
      return &entry->queue;
    }
  }
  auto* entry = new (std::nothrow) LoopQueue{loop, {}, 1, loop_queues};
  if (entry == nullptr) return nullptr;
  loop_queues = entry;
  return &entry->queue;
}

void ReleaseLoopQueue(uv_loop_t* loop) {
  std::lock_guard<std::mutex> hold(loop_queues_lock);
  for (LoopQueue** at = &loop_queues; *at != nullptr; at = &(*at)->next) {
    LoopQueue* entry = *at;
    if (entry->loop != loop) continue;
    if (--entry->users == 0) {
      *at = entry->next;
      delete entry;  // its ring closed
    }
    return;
  }
}

// Where the environment's loop, its queue or its cleanup hook cannot be had,
// the function answers null (cannot be told) on every call.
Napi::Function ChangesPendingFunction(Napi::Env env) {
  auto* state = new (std::nothrow) LoopInotify();
  if (state != nullptr && (napi_get_uv_event_loop(env, &state->loop) != napi_ok || state->loop == nullptr ||
                           (state->queue = AcquireLoopQueue(state->loop)) == nullptr)) {
    delete state;
    state = nullptr;
  }
  if (state != nullptr && napi_add_env_cleanup_hook(env, FreeLoopInotify, state) != napi_ok) {
    ReleaseLoopQueue(state->loop);
    delete state;
    state = nullptr;
  }
  return Napi::Function::New(env, ChangesPendingJs, "changesPending", state);
}

}  // namespace zcopy
