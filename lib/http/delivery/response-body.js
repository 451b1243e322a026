'use strict'

// The body through the response object itself, for whatever stands behind it:
// TLS, compression middleware that replaced write/end, Node's chunked framing, an
// HTTP/2 compat response. No stream is put in between, so nothing here can emit
// an 'error' nobody listens to. A client that goes away ends the transfer quietly.
//
// The engine moves the bytes (its copy: lib/engine/copy/range-copy.js says how
// a client that stops reading is kept cheap); this module says what the
// response is to it:
// - Node's own write calls back, in order, once the bytes went out: the copy
//   is paced by those callbacks, in the engine's pieces. A write a middleware
//   replaced may call back before it is done with the bytes, or never: the
//   copy then goes by write()'s answer and 'drain', in CHUNK_SIZE chunks of
//   their own;
// - an HTTP/1.x response's connection is its socket (the engine asks the
//   kernel how much it takes), once it has one: a response queued behind a
//   pipelined one has none yet. An HTTP/2 stream's flow control is its own;
// - the client going away (hangup.js, the copy's Stop) stops the copy; an HTTP/2 stream
//   closed under its body ends it when its writes stall (closedStream()).
// Once the bytes went out the response is ended here.

const http = require('node:http')
const http2 = require('node:http2')
const { copy } = require('../../engine')

// A response whose write was replaced (compression middleware) is read in
// chunks of this size, allocated per read.
const CHUNK_SIZE = 64 * 1024

const OWN_WRITES = new Set([http.ServerResponse.prototype.write, http2.Http2ServerResponse.prototype.write])

// An HTTP/2 stream closed under its body (the client's session went away
// gracefully) waits to flush what it holds into a window that never opens;
// Node 20.17 and 22.5 then never emit 'close', the writes never call back,
// and the session stays: the stream is destroyed once its writes stall.
function closedStream (res) {
  return () => {
    if (!res.stream.closed) return false
    res.destroy()
    return true
  }
}

// `source` into `res` (copy()'s), then res.end(). → Promise of { bytes,
// complete }: the bytes handed to res.write(), and false when the client went
// away first (nothing more is written then).
function copyIntoResponse (source, res, hangup, callsBack) {
  return copy(source, res, {
    stop: hangup,
    callsBack,
    chunkSize: CHUNK_SIZE,
    socketOf: res instanceof http.ServerResponse ? () => res.socket : null,
    onStall: res instanceof http2.Http2ServerResponse ? closedStream(res) : null
  }).then(({ bytes, complete }) => {
    if (!complete || hangup.stopped) return { bytes, complete: false }
    res.end()
    return { bytes, complete: true }
  })
}

// Writes bytes [start, start + length) of `fd` to `res`, then ends it. → Promise
// of { bytes, complete }. Rejects on a read error or a file shorter than the
// range; the caller destroys the response.
function copyToResponse (fd, start, length, res, hangup) {
  return copyIntoResponse({ fd, start, length }, res, hangup, OWN_WRITES.has(res.write))
}

// Writes `bytes` (a body from memory) to `res` in views of it, under the same
// window, then ends it. → Promise of { bytes, complete } as copyToResponse.
function writeToResponse (bytes, res, hangup) {
  return copyIntoResponse({ bytes }, res, hangup, true)
}

module.exports = { copyToResponse, writeToResponse }
