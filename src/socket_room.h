// socketRoom(fd): how many more bytes a TCP socket's send buffer takes now
// (see socket_room.cc).
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function SocketRoomFunction(Napi::Env env);

}  // namespace zcopy
