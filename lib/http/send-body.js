'use strict'

// Moves the body, an inclusive byte range of an open file, once the status and
// headers are set on `res`. The engine decides how the bytes move; this module
// decides what they go to:
// - plain HTTP/1.x over TCP: Node renders the response head, the engine writes it
//   and the range to the socket itself (the head and the file's first bytes share
//   a packet), then res.end() completes the response so keep-alive and pipelining
//   go on. A pipelined response still waiting for its socket has Node flush its
//   head first, once the socket is its own;
// - HTTP/2: http2stream.respondWithFD, Node's own native file path;
// - anything else (TLS, a res whose write/end were replaced by middleware such as
//   compression, an encoding or framing zcopy did not choose): the response
//   object itself, as a stream, then res.end().
// A transfer that fails after the headers went out destroys the response: the
// Content-Length promised cannot be kept, and the client must not wait for it.

const http = require('node:http')
const net = require('node:net')
const { Writable } = require('node:stream')
const { prematureCloseError } = require('../errors')
const { sendRange } = require('../pipe-file')
const { promiseOf } = require('./promise-of')

const { write: nodeWrite, end: nodeEnd } = http.ServerResponse.prototype

// The client went away: nothing to report, the server goes on.
const DISCONNECTS = new Set([
  'ECONNABORTED', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE'
])

function isDisconnect (err) {
  return DISCONNECTS.has(err.code)
}

// Whether the engine may write to the connection directly, behind Node's back.
// `ownEncoding`: the Content-Encoding on res, if any, is one zcopy chose.
function mayBypassResponse (req, res, ownEncoding) {
  return !req.socket.encrypted &&
    res.write === nodeWrite && res.end === nodeEnd &&
    (ownEncoding || !res.hasHeader('Content-Encoding'))
}

// Resolves true once the status line and headers reached the socket, false if the
// response closed first. A pipelined response only gets its socket once the ones
// before it are done; the write callback waits for that too.
function flushHeaders (res) {
  return new Promise((resolve) => {
    const onClose = () => resolve(false)
    res.once('close', onClose)
    res.write('', (err) => {
      res.off('close', onClose)
      resolve(!err)
    })
  })
}

// The response head, rendered by Node and marked as sent, for the engine to write
// ahead of the body; null when Node must write it: the response is still waiting
// for its socket (pipelining), or Node frames the body itself (chunked encoding).
// _header and _headerSent are the fields Node's own end() and compression
// middleware rely on; they are checked before use.
function takeHead (res) {
  if (!(res.socket instanceof net.Socket)) return null
  res.writeHead(res.statusCode)
  if (res.chunkedEncoding || typeof res._header !== 'string' || res._headerSent !== false) return null
  res._headerSent = true
  return Buffer.from(res._header, 'latin1')
}

function toSocket (res, fd, range) {
  const head = takeHead(res)
  if (head !== null) return bodyToSocket(res, fd, range, head)
  return flushHeaders(res).then((flushed) => flushed ? bodyToSocket(res, fd, range, null) : undefined)
}

function bodyToSocket (res, fd, range, head) {
  if (res.chunkedEncoding || !(res.socket instanceof net.Socket)) {
    // Framing we do not control (an app-set Transfer-Encoding, a socket-less res):
    // let the response object frame the bytes.
    return toResponse(res, fd, range)
  }
  return endAfter(res, sendRange(fd, range.start, range.end - range.start + 1, res.socket, head))
}

// Ends the response once `sending` resolves; → the same result.
function endAfter (res, sending) {
  return sending.then((sent) => {
    res.end()
    return sent
  })
}

// The response as a plain Writable. Middleware that replaces res.write (compression)
// does not always call write callbacks, nor let a 'drain' listener be removed; this
// sink relies only on write()'s return value and one lasting 'drain' listener.
function responseSink (res) {
  let waiting = null
  let closed = false
  const resume = (err) => {
    const callback = waiting
    waiting = null
    if (callback !== null) callback(err)
  }
  res.on('drain', () => resume())
  res.on('close', () => {
    closed = true
    resume(prematureCloseError())
  })
  return new Writable({
    write (chunk, encoding, callback) {
      if (closed) callback(prematureCloseError())
      else if (res.write(chunk)) callback()
      else waiting = callback
    },
    destroy (err, callback) {
      res.destroy()
      callback(err)
    }
  })
}

function toResponse (res, fd, range) {
  return endAfter(res, sendRange(fd, range.start, range.end - range.start + 1, responseSink(res)))
}

// Node reads the file itself, in C++, in its own buffers: not zero-copy.
function toHttp2Stream (res, fd, { start, end }) {
  const stream = res.stream
  if (stream.destroyed) return Promise.resolve()
  const headers = { ...res.getHeaders(), ':status': res.statusCode }
  const length = end - start + 1
  return new Promise((resolve) => {
    stream.once('close', () => resolve(stream.rstCode === 0 ? { bytes: length, zeroCopy: false } : undefined))
    stream.respondWithFD(fd, headers, { offset: start, length })
  })
}

// Sends bytes [start, end] of `fd` (kept open by the caller until this settles).
// Resolves with pipeFile's { bytes, zeroCopy } once the body is out, or with
// undefined when the client went away; rejects, with the response destroyed, when
// the file could not be sent (read error, truncated file).
function sendBody (req, res, fd, range, { ownEncoding }) {
  return promiseOf(() => {
    if (req.httpVersionMajor === 2) return toHttp2Stream(res, fd, range)
    if (mayBypassResponse(req, res, ownEncoding)) return toSocket(res, fd, range)
    return toResponse(res, fd, range)
  }).catch((err) => {
    res.destroy()
    if (!isDisconnect(err)) throw err
  })
}

module.exports = { sendBody }
