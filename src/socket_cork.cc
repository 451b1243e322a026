// setCork(fd, on) → boolean: TCP_CORK on a connected socket's descriptor. The
// HTTP layer corks the socket before Node writes a response head, so the head
// waits in the kernel for the file's first bytes and both share a packet; it
// uncorks once the body is in. False when the descriptor is not a TCP socket
// (a Unix socket has no cork: the head then goes out on its own).
#include "socket_cork.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace zcopy {

namespace {

// Called only by lib/http with the descriptor of a live net.Socket; a bad
// argument answers false rather than throwing.
Napi::Value SetCorkJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) return Napi::Boolean::New(env, false);
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const int on = info[1].ToBoolean().Value() ? 1 : 0;
  if (fd < 0) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on) == 0);
}

}  // namespace

Napi::Function SetCorkFunction(Napi::Env env) {
  return Napi::Function::New(env, SetCorkJs, "setCork");
}

}  // namespace zcopy
