// The native lane (issue 64): a listener and its connections owned in C++,
// answering a request only when JavaScript registered its answer (lane_table.h),
// lending JavaScript one request at a time that it cannot answer (with its
// body as it comes), and handing every other connection to JavaScript as its
// descriptor and the bytes read but not consumed (lib/lane/native-lane.js
// makes a net.Socket of them for Node's own HTTP server). See
// docs/internals.md.
//
// new Lane(onHandOff(fd, bytes), { keepAliveMs, keepAliveLine, idleMs,
//          headTimeoutMs, onLog(records), onLend(id, bytes, ends),
//          onBody(id, bytes), onWritten(id, fileBytes, fileShort),
//          onGone(id, fileBytes, fileShort) })
//   onLog, when given, hears the access log records of the lane's answers (a
//   Buffer of them, lib/lane/records.js reads it) once per loop turn at
//   most, and on destroy(). A head still arriving after headTimeoutMs gets
//   Node's 408; a connection silent for idleMs is closed.
//   .listen(address, port, ipv6) → port     (Node-style errors: bind, listen)
//   .adopt(fd) → port   accepts from an inherited listening socket instead
//   A lent request's answer (with the four callbacks given; without them
//   every request the lane cannot answer hands its connection off), through
//   lib/lane/twin.js: .write(id, bytes) → 0 | 1 | -1
//   .sendFile(id, fd, offset, length) → 0 | 1 | -1 (1: onWritten or onGone
//   says how the range ended, even after finish(id): the lane sends the rest
//   alone)  .readBody(id, on)  .finish(id, close)  .cut(id)
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
