// trimMemory(): hands the C heap's free pages back to the system (see
// memory_trim.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function TrimMemoryFunction(Napi::Env env);

}  // namespace zcopy
