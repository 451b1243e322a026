// idlePriority(): puts every thread of the process in the SCHED_IDLE class
// (see idle_priority.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function IdlePriorityFunction(Napi::Env env);

}  // namespace zcopy
