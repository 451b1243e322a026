'use strict'

const http = require('node:http')
const https = require('node:https')

// refuseAfterAnswers(server): bytes an HTTP/1 server's parser refuses, behind
// requests it parsed before them, are refused as nginx refuses them: every
// earlier request is answered whole, then Node's refusal (400, 431, ...) goes
// out and the connection closes.
//
// Node's own handling ('clientError' with no listener) cannot wait: it writes
// its 400 only if no response on the connection has begun, and destroys the
// socket at once. Pipelined bytes it refuses, parsed in the same read as a
// request before them, so either drop that request's answer (a 400 alone) or
// cut it mid-body: a body zcopy sends by sendfile is still going out when the
// parser reaches them (a 200 KiB file cut after 128 KiB, a 4 MiB one after
// 256 KiB to 2 MiB, every time).
//
// So the server gets a 'clientError' listener (which turns Node's handling off)
// that does Node's work, later when it must: a parse error on a connection
// whose last response is still going out waits for that response's 'close'
// (HTTP/1 answers in order, so every earlier one is done then); the refusal
// is written, and the connection closed once the client had it (linger).
// Node's request timeout and a connection with no answer pending are handled
// at once, as Node does (a socket with an answer under way gets no refusal in
// the middle of its bytes, only the close); other errors close the socket.
// Another 'clientError' listener (an app's own) takes over: this one then
// does nothing.
//
// The last response of each connection is known from the server's 'request'
// events (one WeakMap write per request, public API only). An HTTP/2 server
// is listened to only if it has 'request' listeners already: a first one
// would turn on its compatibility API, request and response objects for
// every stream of an app that answers 'stream' events.

// Node's answers to what its parser refuses (lib/_http_server.js).
const REFUSALS = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'
}
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'

const lastResponses = new WeakMap() // socket → its last response
const refusing = new WeakSet() // sockets whose refusal waits or went out

function onRequest (req, res) {
  if (req.httpVersionMajor === 1) lastResponses.set(req.socket, res)
}

// Whether `res` has not closed yet. Not writableFinished: that turns true as
// soon as a small answer's bytes are handed to the socket, before its
// 'finish', where Node hands the socket to the next response (one Node made
// itself, such as its 400 for a head without Host, never seen as a
// 'request'); 'close' comes after that handover, and marks `res` destroyed.
function pending (res) {
  return res !== undefined && !res.destroyed
}

// Whether Node answers `err` before it closes: what its HTTP/1 parser refused,
// a request head or body too slow. Anything else (a reset, and on an HTTP/2
// server a TLS handshake that failed or timed out, which it emits as
// 'clientError' too) only closes the socket: a TLS socket whose handshake
// never ended would hold a write for ever.
function answered (err) {
  return isParseError(err) || err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
}

function isParseError (err) {
  return typeof err.code === 'string' && err.code.startsWith('HPE_')
}

// How long a refused connection lingers at most for its client to read the
// refusal: nginx's lingering_timeout.
const LINGER_MS = 5000

// Writes Node's refusal for `err` and closes the connection once the client
// had it.
function refuse (socket, err) {
  if (socket.destroyed) return
  if (!socket.writable) {
    socket.destroy()
    return
  }
  socket.end(REFUSALS[err.code] ?? BAD_REQUEST)
  linger(socket)
}

// A socket closed while bytes it received are unread makes the kernel reset
// the connection, and drop what it had not sent yet: the end of an answer, the
// refusal. What the client sent while an answer was going out by sendfile is
// unread (the connection reads nothing meanwhile: delivery/one-at-a-time.js).
// So, as nginx's lingering close: the refusal goes out with a FIN behind it
// (end()), what still comes is read and dropped (Node's parser refuses it
// again, which onClientError ignores), and the socket closes when the client
// closes its side, or after LINGER_MS.
function linger (socket) {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  socket.once('close', () => clearTimeout(timer))
  socket.once('end', () => socket.destroy())
  socket.resume()
}

function onClientError (err, socket) {
  if (this.listenerCount('clientError') > 1) return // the app's own listener handles it
  if (refusing.has(socket)) return // more bytes behind the refused ones
  refusing.add(socket)
  const last = lastResponses.get(socket)
  if (!answered(err)) {
    socket.destroy()
  } else if (!pending(last)) {
    refuse(socket, err)
  } else if (!isParseError(err)) {
    socket.destroy() // not in the middle of an answer's bytes
  } else {
    const settle = () => {
      last.off('close', settle)
      socket.off('close', settle)
      refuse(socket, err)
    }
    last.once('close', settle)
    socket.once('close', settle)
  }
}

const servers = new WeakSet() // servers that have the listeners (once each)

function refuseAfterAnswers (server) {
  if (servers.has(server)) return
  servers.add(server)
  if (server instanceof http.Server || server instanceof https.Server || server.listenerCount('request') > 0) {
    server.on('request', onRequest)
  }
  server.on('clientError', onClientError)
}

module.exports = { refuseAfterAnswers }
