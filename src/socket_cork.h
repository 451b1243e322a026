// setCork(fd, on): TCP_CORK on a socket descriptor (see socket_cork.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function SetCorkFunction(Napi::Env env);

}  // namespace zcopy
