// parseRequestHead(buffer): ParseRequestHead (request_head.h) for the tests of
// the parser (see request_head_binding.cc); frameRequest(buffer):
// FrameRequest (request_frame.h) for the tests of the framing.
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function ParseRequestHeadFunction(Napi::Env env);
Napi::Function FrameRequestFunction(Napi::Env env);

}  // namespace zcopy
