// socketRoom(fd) → number: the bytes a connected TCP socket's send buffer takes
// now without blocking, estimated: its size less what is queued in it, both as
// the kernel accounts them (SO_MEMINFO: sndbuf and wmem_queued, buffers'
// overhead included; Linux 4.6+), or where that is missing its size (SO_SNDBUF)
// less the bytes queued and not yet acknowledged (SIOCOUTQ); -1 when the
// descriptor is not a socket. The HTTP layer asks before it
// encrypts and writes the next pieces of a body over TLS, so that a client that
// stops reading leaves no more queued in user space than one piece
// (lib/http/delivery/response-body.js): Node's TLS socket sits on the TCP descriptor, and
// whatever the kernel does not take waits below it, encrypted, until the client
// reads. The payload that fits is a little less than the room (the buffers'
// overhead): the caller leaves a margin.
#include "socket_room.h"

#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstdint>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

namespace zcopy {

namespace {

// Called only by lib/http with the descriptor of a live socket; a bad argument
// answers -1 rather than throwing.
Napi::Value SocketRoomJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) return Napi::Number::New(env, -1);
  const int fd = info[0].As<Napi::Number>().Int32Value();
  if (fd < 0) return Napi::Number::New(env, -1);
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t length = sizeof meminfo;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &length) == 0 &&
      length > SK_MEMINFO_WMEM_QUEUED * sizeof(uint32_t)) {
    const double size = meminfo[SK_MEMINFO_SNDBUF];
    const double queued = meminfo[SK_MEMINFO_WMEM_QUEUED];
    return Napi::Number::New(env, size > queued ? size - queued : 0);
  }
  int size = 0;
  length = sizeof size;
  int queued = 0;
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &length) != 0 || ioctl(fd, SIOCOUTQ, &queued) != 0) {
    return Napi::Number::New(env, -1);
  }
  return Napi::Number::New(env, size > queued ? size - queued : 0);
}

}  // namespace

Napi::Function SocketRoomFunction(Napi::Env env) {
  return Napi::Function::New(env, SocketRoomJs, "socketRoom");
}

}  // namespace zcopy
