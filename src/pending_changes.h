// changesPending() → whether the event loop's inotify queue holds events libuv
// has not read yet (see pending_changes.cc).
#pragma once

#include <napi.h>
#include <uv.h>

namespace zcopy {

// Whether `loop`'s inotify queue holds unread events: 1 yes, 0 no (or no watch
// on this loop yet), -1 cannot be told. `proven_fd`: the caller's memory of
// the descriptor last proven to be the loop's inotify instance (start at -1).
int InotifyEventsQueued(uv_loop_t* loop, int* proven_fd);

Napi::Function ChangesPendingFunction(Napi::Env env);

}  // namespace zcopy
