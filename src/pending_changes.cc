// changesPending() → true, false, or null when it cannot be told.
//
// fs.watch on Linux is libuv's inotify: one inotify descriptor per event loop,
// read when the loop polls it. A request read from a socket earlier in the same
// poll batch is answered before a change that happened before it was sent is
// read (epoll reports descriptors in the order they became ready, and a socket
// reported in the previous turn is re-queued ahead of the rest). The open-file
// cache answers a remembered path with no stat while watches vouch for it
// (lib/http/files/remembered-paths.js); before it does, it asks here whether the
// loop's inotify queue holds unread events (FIONREAD): then the request looks
// its name up as a miss does, on the pool, and the events are read meanwhile.
//
// The descriptor is libuv's `inotify_fd` loop field (uv/linux.h, part of the
// uv_loop_t layout that libuv keeps ABI-stable across 1.x). It is used only once
// /proc/self/fd says the number names an inotify instance; -1 (no watch set
// yet on this loop) answers false: nothing is remembered without a watch.
#include "pending_changes.h"

#include <sys/ioctl.h>
#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <cstring>
#include <new>

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

// Per environment (each Worker runs its own loop): its loop, and the last
// descriptor proven to be that loop's inotify instance. Freed by the
// environment's cleanup hook.
struct LoopInotify {
  uv_loop_t* loop = nullptr;
  int proven_fd = -1;
};

void FreeLoopInotify(void* data) {
  delete static_cast<LoopInotify*>(data);
}

Napi::Value ChangesPendingJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* state = static_cast<LoopInotify*>(info.Data());
  if (state == nullptr) return env.Null();
  const int queued = InotifyEventsQueued(state->loop, &state->proven_fd);
  return queued < 0 ? env.Null() : Napi::Boolean::New(env, queued > 0);
}

}  // namespace

int InotifyEventsQueued(uv_loop_t* loop, int* proven_fd) {
  const int fd = loop->inotify_fd;
  if (fd < 0) return 0;
  if (fd != *proven_fd) {
    if (!IsInotify(fd)) return -1;
    *proven_fd = fd;
  }
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0) return -1;
  return queued > 0 ? 1 : 0;
}

// Where the environment's loop or its cleanup hook cannot be had, the function
// answers null (cannot be told) on every call.
Napi::Function ChangesPendingFunction(Napi::Env env) {
  auto* state = new (std::nothrow) LoopInotify();
  if (state != nullptr && (napi_get_uv_event_loop(env, &state->loop) != napi_ok || state->loop == nullptr ||
                           napi_add_env_cleanup_hook(env, FreeLoopInotify, state) != napi_ok)) {
    delete state;
    state = nullptr;
  }
  return Napi::Function::New(env, ChangesPendingJs, "changesPending", state);
}

}  // namespace zcopy
