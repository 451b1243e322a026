// changesPending() → whether the event loop's inotify queue holds events libuv
// has not read yet (see pending_changes.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function ChangesPendingFunction(Napi::Env env);

}  // namespace zcopy
