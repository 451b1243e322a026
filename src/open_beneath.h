// openBeneath(dirFd, relativePath) → Promise<fd>: openat2(2) confined below a
// directory descriptor, on libuv's thread pool.
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function OpenBeneathFunction(Napi::Env env);
// close(fd): closes a descriptor openBeneath returned.
Napi::Function CloseFunction(Napi::Env env);

}  // namespace zcopy
