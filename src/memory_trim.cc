// trimMemory() → boolean: malloc_trim(0) where the C library has it (glibc),
// false elsewhere (musl returns its free pages by itself). Clients that stop
// reading over TLS leave the C heap fragmented when they go: each connection's
// OpenSSL and Node TLS buffers are freed among the allocations that stay, and
// glibc returns only the top of its heap on free(), so the process would keep
// the RSS of the crowd (issue 47). lib/http/delivery/piece-pool.js calls this once a
// burst is over (no piece taken for a whole idle period): glibc then gives
// back every free page inside its arenas (MADV_DONTNEED), a few milliseconds
// for a heap of a hundred megabytes, on the loop thread, once per burst.
#include "memory_trim.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace zcopy {

namespace {

Napi::Value TrimMemoryJs(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

}  // namespace

Napi::Function TrimMemoryFunction(Napi::Env env) {
  return Napi::Function::New(env, TrimMemoryJs, "trimMemory");
}

}  // namespace zcopy
