'use strict'

// Moves the body, an inclusive byte range of an open file, once the status and
// headers are set on `res`. This module says what the response's destination
// allows (destinationOf: its socket, TLS, HTTP/2, whether its writes pass the
// bytes through, its framing); the engine decides from that whether the bytes
// go by sendfile or are copied (movesByZeroCopy):
// - plain HTTP/1.x over TCP, with the native addon: Node writes the response head
//   (flushHeaders, public API), the engine sendfiles the range to the socket
//   itself (a small body's first bytes share the head's packet: TCP_CORK), then
//   res.end() completes the response so keep-alive and pipelining go on. A
//   pipelined response still waiting for its socket has Node flush its head
//   first, once the socket is its own;
// - anything else (the pure-JS fallback, TLS, a res whose write/end were replaced
//   by middleware such as compression, an encoding or framing zcopy did not
//   choose, HTTP/2): the response object itself, chunk by chunk
//   (response-body.js, the engine's copy), then res.end().
//   HTTP/2 does not use http2stream.respondWithFD: on Node 20 to 26 a client that
//   cancels the stream or closes the connection while it runs crashes the
//   process (SIGSEGV, Node's bug); no version has been shown safe.
// While a body goes out by sendfile, Node cannot see its client stop reading:
// its connection reads no further request meanwhile (one-at-a-time.js).
// Every transfer settles once its client is gone, whatever it was waiting for
// (its socket, a write, 'drain', the engine): see hangup.js. A transfer that
// fails after the headers went out destroys the response: the Content-Length
// promised cannot be kept, and the client must not wait for it.

const http = require('node:http')
const net = require('node:net')
const { isFronted } = require('./fronted')
const { watchHangup } = require('./hangup')
const { readingHeldWhile } = require('./one-at-a-time')
const { promiseOf } = require('../common')
const { copyToResponse, writeToResponse } = require('./response-body')
const { PIECE_SIZE, movesByZeroCopy, sendRange, sendsFiles, setCork, socketFd } = require('../../engine')

const { write: nodeWrite, end: nodeEnd } = http.ServerResponse.prototype

// The client went away: nothing to report, the server goes on.
const DISCONNECTS = new Set([
  'ECONNABORTED', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE'
])

function isDisconnect (err) {
  return DISCONNECTS.has(err.code)
}

// What sendBody resolves with when the client went away before any byte of the body.
function nothingSent () {
  return { bytes: 0, zeroCopy: false, complete: false }
}

// What the destination of `res` allows, for the engine to choose how its body
// moves (movesByZeroCopy). `ownEncoding`: the Content-Encoding on res, if any,
// is one zcopy chose. Before the head is written `socket` may still be null
// (a pipelined response) and `framed` is not known yet: whoever sends to the
// socket asks again once the head went out (bodyToSocket).
function destinationOf (req, res, ownEncoding) {
  return {
    socket: res.socket,
    encrypted: Boolean(req.socket.encrypted),
    multiplexed: req.httpVersionMajor !== 1,
    passesThrough: passesThrough(res, ownEncoding),
    framed: res.chunkedEncoding === true
  }
}

// Whether a body for `req` is copied through user space whatever its response
// does: without the addon, over HTTP/2, over TLS (the kernel cannot encrypt it).
function copiesBody (req) {
  return !movesByZeroCopy({
    socket: null,
    encrypted: Boolean(req.socket.encrypted),
    multiplexed: req.httpVersionMajor !== 1,
    passesThrough: true,
    framed: false
  })
}

// Whether what is written to `res` reaches its connection as it is: Node's own
// write and end, with no Content-Encoding zcopy did not choose (someone else
// means to encode the body), or a body zcopy encoded itself behind middleware
// that passes encoded bodies through.
function passesThrough (res, ownEncoding) {
  if (res.write === nodeWrite && res.end === nodeEnd) return ownEncoding || !res.hasHeader('Content-Encoding')
  return ownEncoding && passesEncodedBodies(res)
}

// Express's compression() replaces write and end (and adds flush), and leaves a
// response that already has a Content-Encoding alone: its write and end then call
// Node's. A body zcopy encoded itself (a compressed variant, a precompressed
// sibling) may then go out by sendfile behind it. Any other replacement keeps
// the stream path.
function passesEncodedBodies (res) {
  return Object.hasOwn(res, 'flush') && typeof res.flush === 'function' && res.flush.name === 'flush' &&
    res.write.name === 'write' && res.end.name === 'end' && Object.hasOwn(res, 'write') && Object.hasOwn(res, 'end')
}

// Bodies up to this size go out corked behind their head. Above it the head goes
// on its own: a corked socket holds back the partial segment at the end of each
// sendfile, a delay per chunk that large bodies feel (docs/internals.md, "HTTP:
// how the bytes move").
const CORK_LIMIT = 64 * 1024

// Has Node write the response head now, through its public API (flushHeaders).
// A small body's head waits in the kernel (TCP_CORK) for the file's first bytes,
// to share their packet. Returns the corked descriptor, -1 when nothing was
// corked, or null when the head cannot go out now: the response is still waiting
// for its socket (pipelining), writes are queued on the socket, or Node frames
// the body itself (chunked encoding).
function flushHead (res, length) {
  const socket = res.socket
  if (!(socket instanceof net.Socket || sendsFiles(socket)) || socket.connecting || socket.writableLength !== 0) return null
  res.writeHead(res.statusCode)
  if (res.chunkedEncoding) return null
  const fd = length <= CORK_LIMIT ? socketFd(socket) : -1
  const corked = fd >= 0 && setCork(fd, true)
  res.flushHeaders()
  return corked ? fd : -1
}

// The engine sends what it can of a cached range before it returns (its eager
// path): uncorking right after the start pushes the head with those bytes. A
// socket destroyed meanwhile has no descriptor to uncork.
function toSocket (req, res, fd, range, destination) {
  const socket = res.socket
  const corked = flushHead(res, range.end - range.start + 1)
  if (corked === null) {
    return flushHeaders(req, res).then((flushed) => flushed ? bodyToSocket(req, res, fd, range, destination) : nothingSent())
  }
  const sending = bodyToSocket(req, res, fd, range, destination)
  if (corked >= 0 && !socket.destroyed) setCork(corked, false)
  return sending
}

// Resolves true once the status line and headers reached the socket, false if the
// client went away first. A pipelined response only gets its socket once the ones
// before it are done; the write callback waits for that too, and never comes if
// the connection closes before (nor does the response's 'close').
function flushHeaders (req, res) {
  const hangup = watchHangup(req, res)
  return hangup.wait((done) => {
    res.write('', (err) => { if (!err) done() })
  }).then((flushed) => {
    hangup.dispose()
    return flushed
  })
}

// The engine reports a transfer done once the bytes left, maybe after the client
// read them all and had the server close: the response then ends on a server
// that no longer listens, whose close already reaped the idle connections, and
// this one, kept alive, would hold the close until the client hangs up. It is
// reaped as soon as it is idle.
function releaseIfClosing (res) {
  const server = res.socket && res.socket.server
  if (!server || server.listening || isFronted(server) || typeof server.closeIdleConnections !== 'function') return
  res.once('finish', () => server.closeIdleConnections())
}

// Once the head went out, the engine is asked again with what is known now: the
// response's socket, and whether Node frames the body (an app-set
// Transfer-Encoding); if it will not send to that socket, the response object
// takes the bytes.
function bodyToSocket (req, res, fd, range, destination) {
  destination.socket = res.socket
  destination.framed = res.chunkedEncoding === true
  if (destination.socket === null || !movesByZeroCopy(destination)) return toResponse(req, res, fd, range)
  return sendRange(fd, range.start, range.end - range.start + 1, res.socket).then(({ bytes, zeroCopy, later }) => {
    releaseIfClosing(res)
    res.end()
    // A literal, not { ...sent, complete }: V8 built a new hidden class for
    // that spread on every response, on the hot path of every large file.
    if (later === undefined) return { bytes, zeroCopy, complete: true }
    return { bytes, zeroCopy, complete: true, later }
  }, (err) => {
    if (!isDisconnect(err)) throw err
    res.destroy()
    return { bytes: err.bytesWritten || 0, zeroCopy: true, complete: false }
  })
}

function toResponse (req, res, fd, { start, end }) {
  const hangup = watchHangup(req, res)
  return copyToResponse(fd, start, end - start + 1, res, hangup).then(({ bytes, complete }) => {
    hangup.dispose()
    return { bytes, zeroCopy: false, complete }
  }, (err) => {
    hangup.dispose()
    throw err
  })
}

// Sends `bytes`, a body from memory, when its copies would cost: over TLS each
// byte handed to the response is encrypted at once and held until the client
// reads it; over HTTP/2 what is handed to a stream counts against its session's
// memory (maxSessionMemory, 10 MiB by default), and past it Node refuses the
// session's new streams (ENHANCE_YOUR_CALM: 50 stalled streams of a 900 KiB
// body each did it). So a body bigger than a piece goes out in pieces there,
// as a file's does (response-body.js). → Promise of { bytes, zeroCopy,
// fromMemory, complete }, or undefined when it went out whole now (plain
// HTTP/1.x: Node writes the head and the bytes together, nothing is copied).
function sendBytes (req, res, bytes) {
  if (bytes.length <= PIECE_SIZE || (req.httpVersionMajor === 1 && !req.socket.encrypted)) {
    res.end(bytes)
    return undefined
  }
  const hangup = watchHangup(req, res)
  return writeToResponse(bytes, res, hangup).then(({ bytes, complete }) => {
    hangup.dispose()
    return { bytes, zeroCopy: false, fromMemory: true, complete }
  })
}

// Sends bytes [start, end] of `fd` (kept open by the caller until this settles).
// Resolves with { bytes, zeroCopy, complete }: complete once the body is out, not
// when the client went away first (bytes: what was sent until then; none when it
// left before its head went out); rejects, with the response destroyed, when the
// file could not be sent (read error, truncated file). Behind zcopy.nativeLane,
// the lane may send the rest of a body alone, the response ended: then `later`
// too, the engine's promise of { bytes, complete, truncated } once it did.
function sendBody (req, res, fd, range, { ownEncoding }) {
  return promiseOf(() => {
    const destination = destinationOf(req, res, ownEncoding)
    if (movesByZeroCopy(destination)) return readingHeldWhile(req, () => toSocket(req, res, fd, range, destination))
    return toResponse(req, res, fd, range)
  }).catch((err) => {
    res.destroy()
    if (!isDisconnect(err)) throw err
    return nothingSent()
  })
}

module.exports = { copiesBody, sendBody, sendBytes }
