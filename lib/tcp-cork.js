'use strict'

// corkTcp(socket) → uncork(): holds a TCP connection's outgoing bytes in the
// kernel (TCP_CORK, nginx's tcp_nopush) until uncork(), so that bytes written
// through Node (HTTP headers) and the file bytes sendfile adds after them leave
// in full packets instead of a small one each. A no-op without the addon, for
// TLS, for sockets that are not TCP, and for a null socket.

const { native } = require('./binding')
const { socketFd } = require('./destination')

const noop = () => {}

function corkTcp (socket) {
  const fd = native && socket ? socketFd(socket) : -1
  if (fd < 0 || native.setTcpCork(fd, true) !== 0) return noop
  return function uncork () {
    // Only while Node still holds this very descriptor: after a close, the
    // number may already belong to another socket.
    if (!socket.destroyed && socketFd(socket) === fd) native.setTcpCork(fd, false)
  }
}

module.exports = { corkTcp }
