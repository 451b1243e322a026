// zcopy native addon: exports the Transfer class (transfer.h), openBeneath,
// lookupBeneath and close (open_beneath.h), setCork (socket_cork.h),
// socketRoom (socket_room.h), trimMemory (memory_trim.h), idlePriority
// (idle_priority.h), probeKernel (probe.h), changesPending
// (pending_changes.h) and, for the parsers' tests, parseRequestHead and
// frameRequest (request_head_binding.h), and the native lane's Lane class (lane.h).
#include <napi.h>

#include "idle_priority.h"
#include "lane.h"
#include "memory_trim.h"
#include "open_beneath.h"
#include "pending_changes.h"
#include "probe.h"
#include "request_head_binding.h"
#include "socket_cork.h"
#include "socket_room.h"
#include "transfer.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Napi::Function transfer = zcopy::Transfer::Init(env);
  if (env.IsExceptionPending()) return exports;
  exports.Set("Transfer", transfer);
  exports.Set("openBeneath", zcopy::OpenBeneathFunction(env));
  exports.Set("lookupBeneath", zcopy::LookupBeneathFunction(env));
  exports.Set("close", zcopy::CloseFunction(env));
  exports.Set("setCork", zcopy::SetCorkFunction(env));
  exports.Set("socketRoom", zcopy::SocketRoomFunction(env));
  exports.Set("trimMemory", zcopy::TrimMemoryFunction(env));
  exports.Set("idlePriority", zcopy::IdlePriorityFunction(env));
  exports.Set("probeKernel", zcopy::ProbeKernelFunction(env));
  exports.Set("changesPending", zcopy::ChangesPendingFunction(env));
  exports.Set("Lane", zcopy::LaneClass(env));
  exports.Set("parseRequestHead", zcopy::ParseRequestHeadFunction(env));
  exports.Set("frameRequest", zcopy::FrameRequestFunction(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(zcopy, Init)
