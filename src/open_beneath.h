// openBeneath(dirFd, relativePath) → Promise<{ fd, link }>: openat2(2) confined
// below a directory descriptor, on libuv's thread pool; lookupBeneath(dirFd,
// relativePath, name, dirName): a miss's stats and that open in one pool job
// (see open_beneath.cc).
#pragma once

#include <napi.h>

#include <cstdint>

namespace zcopy {

// openat2(dir_fd, path, { flags, resolve: RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS }), called again on EINTR and (a bounded number of
// times) on EAGAIN, the race with a rename: the descriptor, or -1 with
// errno set (ENOSYS where the kernel has no openat2). Blocking; for a pool
// thread (openBeneath) or probeKernel.
int OpenAt2Beneath(int dir_fd, const char* path, uint64_t flags);

Napi::Function OpenBeneathFunction(Napi::Env env);
Napi::Function LookupBeneathFunction(Napi::Env env);
// close(fd): closes a descriptor openBeneath returned.
Napi::Function CloseFunction(Napi::Env env);

}  // namespace zcopy
