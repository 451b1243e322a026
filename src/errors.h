// Errors shaped like Node's own: system errors carry code/errno/syscall.
#pragma once

#include <napi.h>

#include <cstdint>

namespace zcopy {

// `err` is a positive errno value; the JS `errno` property is negative, as in Node.
Napi::Error SystemError(Napi::Env env, int err, const char* syscall);

// The source ended at `offset` with `missing` bytes of the range still unsent.
Napi::Error TruncatedError(Napi::Env env, int64_t offset, int64_t missing);

// Rejection for an aborted transfer; lib/sendfile.js turns it into an AbortError
// carrying the signal's reason.
Napi::Error AbortedError(Napi::Env env);

}  // namespace zcopy
