// Errors shaped like Node's own: system errors carry code/errno/syscall(/path).
// Written against the C API and never throwing: a transfer may settle while its
// environment is going away (a Worker being terminated), when napi calls fail;
// each function then returns nullptr instead of raising a fatal error.
#pragma once

#include <node_api.h>

#include <cstdint>

namespace zcopy {

// `err` is a positive errno value; the JS `errno` property is negative, as in Node.
// `path` (may be null) is added as the `path` property and to the message.
napi_value SystemError(napi_env env, int err, const char* syscall, const char* path = nullptr);

// The source ended at `offset` with `missing` bytes of the range still unsent.
napi_value TruncatedError(napi_env env, int64_t offset, int64_t missing);

// Rejection for an aborted transfer; lib/engine/sendfile.js turns it into an AbortError
// carrying the signal's reason.
napi_value AbortedError(napi_env env);

// The rejection of a transfer that stopped to hand the descriptors it opened to
// JavaScript (code ERR_ZCOPY_NOT_REGULAR; never seen by users).
napi_value NotRegularError(napi_env env);

}  // namespace zcopy
