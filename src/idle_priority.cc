// idlePriority() → number: moves every thread of the calling process into
// Linux's SCHED_IDLE class and returns how many it moved (0 where there is no
// such class or no /proc). Threads the process starts afterwards inherit the
// class. The compression process (lib/http/compress/process.js) calls it once
// at start: nice 19 only shrinks a thread's share, and a server thread that
// wakes behind it may still wait for the rest of its slice; a SCHED_IDLE
// thread is preempted as soon as any other thread on its CPU wakes, so the
// compression takes only the time nothing else wants. An unprivileged process
// may lower itself so; it cannot come back (nothing here needs to).
#include "idle_priority.h"

#if defined(__linux__)
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#endif

namespace zcopy {

namespace {

#if defined(__linux__)
// A DIR* closed on every path.
class DirHandle {
 public:
  explicit DirHandle(const char* path) : dir_(opendir(path)) {}
  ~DirHandle() {
    if (dir_ != nullptr) closedir(dir_);
  }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  DIR* get() const { return dir_; }

 private:
  DIR* dir_;
};

int MoveThreadsToIdle() {
  DirHandle tasks("/proc/self/task");
  if (tasks.get() == nullptr) return 0;
  sched_param param{};
  param.sched_priority = 0;
  int moved = 0;
  while (dirent* entry = readdir(tasks.get())) {
    char* end = nullptr;
    long tid = strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || tid <= 0) continue;
    if (sched_setscheduler(static_cast<pid_t>(tid), SCHED_IDLE, &param) == 0) moved++;
  }
  return moved;
}
#endif

Napi::Value IdlePriorityJs(const Napi::CallbackInfo& info) {
#if defined(__linux__)
  return Napi::Number::New(info.Env(), MoveThreadsToIdle());
#else
  return Napi::Number::New(info.Env(), 0);
#endif
}

}  // namespace

Napi::Function IdlePriorityFunction(Napi::Env env) {
  return Napi::Function::New(env, IdlePriorityJs, "idlePriority");
}

}  // namespace zcopy
