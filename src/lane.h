// The native lane (issue 64): a listener and its connections owned in C++,
// answering a request only when JavaScript registered its answer (lane_table.h)
// lending JavaScript a whole request without a body that it cannot answer,
// and handing every other connection to JavaScript as its descriptor and the
// bytes read but not consumed (bin/lib/serve/native-lane.js makes a
// net.Socket of them for Node's own HTTP server). See docs/internals.md.
//
// new Lane(onHandOff(fd, bytes), { keepAliveMs, keepAliveLine, idleMs,
//          headTimeoutMs, onLog(records), onLend(id, bytes, address, port, family),
//          onWritten(id), onGone(id) })
//   onLog, when given, hears the access log records of the lane's answers (a
//   Buffer of them, bin/lib/serve/lane-log.js reads it) once per loop turn at
//   most, and on destroy(). A head still arriving after headTimeoutMs gets
//   Node's 408; a connection silent for idleMs is closed.
//   .listen(address, port, ipv6) → port     (Node-style errors: bind, listen)
//   .write(id, bytes) → 0 | 1 | -1  .finish(id, close)  .cut(id) → lent file bytes sent
//               a lent request's answer (with the three on* callbacks, a
//               whole request without a body that the lane cannot answer is
//               lent, not handed off: bin/lib/serve/lane-twin.js)
//   .adopt(fd) → port   accepts from an inherited listening socket instead
// Lane.bind(address, port, ipv6) → { fd, port }: a listening socket no lane
//   polls (a --workers primary's, which its workers' lanes adopt)
//   .add(method, target, host?, acceptEncoding?, head, bytes?, file?) → row id
//   .forget(id) .has(id) .clear() .takeHits() → ids of the rows that answered
//   .setBody(id, bytes)
//   .stop()     graceful: no more accepts, idle connections closed, answers
//               in flight finish; .connections() → how many are left
//   .destroy()  every connection and the listener closed now
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function LaneClass(Napi::Env env);

}  // namespace zcopy
