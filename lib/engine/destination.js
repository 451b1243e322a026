'use strict'

// What a destination is, and whether the kernel can take it directly. This is the
// one place that decides between zero-copy and a copy through user space: for
// the destinations pipeFile and sendRange are given, and for a response-like
// one the layer above describes (movesByZeroCopy).

const fs = require('node:fs')
const net = require('node:net')
const { zeroCopyAvailable } = require('./binding')
const { invalidArgType } = require('./errors')
const { isPathLike } = require('./source')
const { validateFd } = require('./validate')

function isWritable (value) {
  return value !== null && typeof value === 'object' &&
    typeof value.write === 'function' && typeof value.on === 'function' &&
    typeof value.destroy === 'function'
}

// A destination with no descriptor of its own that sends a file's bytes onto
// its connection itself, by sendfile (a connection another part of the
// process owns, such as a native server's): destination[SEND_FILE](fd, start,
// length) → Promise of { bytes, complete, truncated } once the range went out
// (or the connection went away: complete false; or the file ended before the
// range did: truncated true too), sent in order after what was written to the
// destination before; `fd` stays open until it settles. Or, at once, { bytes,
// complete: true, later }: the destination sends the range from a descriptor
// of its own, and `later` (a Promise, never rejected) settles with the
// range's own { bytes, complete, truncated } once it went (the destination's
// writer may end meanwhile).
const SEND_FILE = Symbol('zcopy.sendFile')

function sendsFiles (destination) {
  return destination !== null && typeof destination === 'object' && typeof destination[SEND_FILE] === 'function'
}

// The descriptor under a plain (non-TLS) socket, or -1: TLS encrypts in user
// space, and a socket over a JS Duplex has no descriptor at all.
function socketFd (socket) {
  if (socket.encrypted) return -1
  const handle = socket._handle
  return handle && typeof handle.fd === 'number' ? handle.fd : -1
}

// The TCP descriptor under a socket, TLS or not (a TLS socket's handle sits on
// the TCP one and carries its descriptor), or -1: for asking the kernel about the
// connection (how much its send buffer takes), never for writing to it.
function transportFd (socket) {
  const handle = socket && socket._handle
  return handle && typeof handle.fd === 'number' ? handle.fd : -1
}

// A WriteStream is written at its file's current offset, as sendfile does, unless
// it appends (sendfile refuses O_APPEND) or writes at its own `start` position.
function fileStreamSupportsZeroCopy (stream) {
  return stream.pos === undefined && !String(stream.flags).includes('a')
}

function classifyDestination (destination) {
  if (typeof destination === 'number') return { kind: 'fd', fd: validateFd('destination', destination) }
  if (isPathLike(destination)) return { kind: 'path', path: destination }
  if (destination instanceof net.Socket) return { kind: 'socket', stream: destination }
  if (destination instanceof fs.WriteStream) return { kind: 'file-stream', stream: destination }
  if (isWritable(destination)) return { kind: 'writable', stream: destination }
  throw invalidArgType('destination',
    'a net.Socket, a Writable, a file descriptor or a path (string, Buffer or URL)', destination)
}

// Whether bytes for `destination` (already classified) can go through sendfile.
function supportsZeroCopy ({ kind, stream }) {
  if (!zeroCopyAvailable) return false
  if (kind === 'socket') return !stream.encrypted && (stream.connecting || socketFd(stream) >= 0)
  if (kind === 'file-stream') return fileStreamSupportsZeroCopy(stream)
  return kind === 'fd' || kind === 'path'
}

// Whether a body goes to a response-like destination (one that frames and
// writes its own bytes onto a connection: an HTTP response) by sendfile to the
// connection's socket, behind the destination's back; false: it is copied
// through the destination's own writes. The layer above says what the
// destination allows, in `description`:
// - socket: the connection's socket, or null while the destination has none
//   yet (it is sent to once it has one); one that is not a net.Socket (a
//   framework's stand-in) has no descriptor;
// - encrypted: TLS on the connection (the kernel cannot encrypt);
// - multiplexed: the connection carries other streams' frames too (HTTP/2);
// - passesThrough: what is written to the destination reaches the connection
//   as it is (no write or end replaced by one that may transform the bytes);
// - framed: the destination frames the bytes itself (chunked encoding).
function movesByZeroCopy ({ socket, encrypted, multiplexed, passesThrough, framed }) {
  if (!zeroCopyAvailable || encrypted || multiplexed || !passesThrough || framed) return false
  return socket === null || socket instanceof net.Socket || sendsFiles(socket)
}

module.exports = { SEND_FILE, classifyDestination, movesByZeroCopy, sendsFiles, socketFd, supportsZeroCopy, transportFd }
