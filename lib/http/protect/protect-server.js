'use strict'

// protectServer(server, { timeout }): what a node:http, node:https or
// node:http2 server needs against clients that stall, vanish or pipeline over
// TLS. Three things:
//
// - HTTPS (and HTTP/1.1 on a secure HTTP/2 server): Node feeds the HTTP/1
//   parser straight from the TLS handle. When a response is backed up, Node
//   pauses the socket and the parser, but the TLS records already decrypted
//   from the same TCP read still reach the paused parser: HPE_PAUSED, then a
//   400 or a response cut mid-body (Node 20 to 26). A 'data' listener makes Node
//   feed the parser through 'data' events, which respect the pause; nothing is
//   lost (the bytes wait in the socket's buffer).
// - Timeouts like nginx's: a socket idle for `timeout` ms (no byte read or
//   written: before its first request, while a response waits on a client that
//   reads nothing, or a peer gone without a FIN) is destroyed
//   (server.timeout, HTTP/2 sessions too); a request head must arrive within
//   `timeout` (headersTimeout; Node checks every 30 s by default).
//   0 leaves Node's timeouts as they are.
// - Bytes the HTTP/1 parser refuses behind pipelined requests: the requests
//   before them answered whole, then Node's 400 and a close, rather than an
//   answer dropped or cut mid-body (refuse-after-answers.js).

const tls = require('node:tls')
const { refuseAfterAnswers } = require('./refuse-after-answers')
const { invalidArgType, validateInteger, validateObject } = require('../../engine')

const DEFAULT_TIMEOUT_MS = 60000

function noop () {}

// Only HTTP/1 sockets have a parser; an HTTP/2 session reads its socket itself.
function feedParserByEvents (socket) {
  if (socket.parser) socket.on('data', noop)
}

function protectServer (server, options = {}) {
  if (server === null || typeof server !== 'object' || typeof server.on !== 'function' || typeof server.setTimeout !== 'function') {
    throw invalidArgType('server', 'a node:http, node:https or node:http2 server', server)
  }
  validateObject('options', options)
  const timeout = options.timeout === undefined ? DEFAULT_TIMEOUT_MS : validateInteger('options.timeout', options.timeout, 0, 2 ** 31 - 1)
  if (server instanceof tls.Server) server.on('secureConnection', feedParserByEvents)
  refuseAfterAnswers(server)
  if (timeout > 0) {
    server.setTimeout(timeout)
    if (typeof server.headersTimeout === 'number') {
      server.headersTimeout = server.requestTimeout > 0 ? Math.min(timeout, server.requestTimeout) : timeout
    }
  }
  return server
}

module.exports = { protectServer, DEFAULT_TIMEOUT_MS }
