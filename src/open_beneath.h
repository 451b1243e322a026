// openBeneath(dirFd, relativePath) → Promise<{ fd, link }>: openat2(2) confined
// below a directory descriptor, on libuv's thread pool; lookupBeneath(dirFd,
// relativePath, name, dirName): a miss's stats and that open in one pool job
// (see open_beneath.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function OpenBeneathFunction(Napi::Env env);
Napi::Function LookupBeneathFunction(Napi::Env env);
// close(fd): closes a descriptor openBeneath returned.
Napi::Function CloseFunction(Napi::Env env);

}  // namespace zcopy
