// zcopy native addon: the Transfer class (see transfer.h) and setTcpCork.
#include <napi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

#include "transfer.h"

namespace {

// setTcpCork(fd, on) → 0 or an errno value. TCP_CORK (nginx's tcp_nopush) holds
// partial segments in the kernel until it is cleared, so that headers written
// through Node and the body sendfile adds leave together. Never throws: a socket
// that is not TCP simply reports the errno (ENOTSUP / EOPNOTSUPP).
Napi::Value SetTcpCork(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) {
    Napi::TypeError::New(env, "setTcpCork(fd, on)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const int on = info[1].ToBoolean().Value() ? 1 : 0;
  const int rc = setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
  return Napi::Number::New(env, rc == 0 ? 0 : errno);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Transfer", zcopy::Transfer::Init(env));
  exports.Set("setTcpCork", Napi::Function::New(env, SetTcpCork, "setTcpCork"));
  return exports;
}

}  // namespace

NODE_API_MODULE(zcopy, Init)
