'use strict'

// The body through the response object itself, for whatever stands behind it:
// TLS, compression middleware that replaced write/end, Node's chunked framing, an
// HTTP/2 compat response. Reads the range in chunks and hands each to res.write();
// write()'s return value and 'drain' are the only backpressure used (middleware
// does not always call write callbacks), and no stream is put in between, so
// nothing here can emit an 'error' nobody listens to. A client that goes away
// ends the transfer quietly.

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const { promisify } = require('node:util')
const { truncatedError } = require('../errors')
const { ChunkSpares } = require('./chunk-spares')

const read = promisify(fs.read)

const CHUNK_SIZE = 256 * 1024

// Chunks whose bytes Node is done with, for the next transfers: up to 64 (16
// MiB). 256 TLS clients of 1 MiB responses still allocated 0.7 chunks per
// response with 16 kept, 0.14 with 64 (1.09x and 1.15x the responses per
// second in two runs, 2026-11-27). A chunk comes back only from a write's
// callback without an error, and only when res.write is Node's own: a
// middleware that replaced it may call back before it is done with the bytes
// (or never: then nothing comes back).
const spares = new ChunkSpares({ chunkSize: CHUNK_SIZE, max: 64, idleMs: 10_000 })
const OWN_WRITES = new Set([http.ServerResponse.prototype.write, http2.Http2ServerResponse.prototype.write])

// The chunks of one transfer: the next read goes into the chunk its last write
// gave back, so that a transfer whose writes keep up holds one chunk from start
// to end, taken from the spares (or allocated) once. Handing every chunk back
// to the spares instead lost most of them under load: with 256 clients over
// TLS waiting for 'drain', 3.7 of the 4 reads of a 1 MiB response allocated,
// and V8's major collections took half its helper threads' time (2026-11-27).
// What comes back after the transfer ended goes to the spares.
class TransferChunks {
  constructor () {
    this.free = null // a chunk Node is done with, for this transfer's next read
    this.ended = false
  }

  take () {
    const chunk = this.free ?? spares.take()
    this.free = null
    return chunk
  }

  // The callback for the write of `chunk`.
  giveBack (chunk) {
    return (err) => {
      if (err) return
      if (!this.ended && this.free === null) this.free = chunk
      else spares.give(chunk)
    }
  }

  end () {
    this.ended = true
    if (this.free !== null) spares.give(this.free)
    this.free = null
  }
}

// Writes bytes [start, start + length) of `fd` to `res`, then ends it. → Promise
// of { bytes, complete }: the bytes handed to res.write(), and false when the
// client went away first (nothing more is written then). Rejects on a read error
// or a file shorter than the range; the caller destroys the response.
async function copyToResponse (fd, start, length, res, hangup) {
  // Middleware such as compression() forwards res.on('drain') to its own stream and
  // offers no way to remove the listener: one lasting listener, added when needed.
  let onDrain = null
  const drained = () => hangup.wait((done) => {
    if (onDrain === null) res.on('drain', () => onDrain())
    onDrain = done
  })
  let done = 0
  const gone = () => ({ bytes: done, complete: false })
  const chunks = OWN_WRITES.has(res.write) ? new TransferChunks() : null
  try {
    while (done < length) {
      if (hangup.gone) return gone()
      const size = Math.min(CHUNK_SIZE, length - done)
      const chunk = chunks !== null ? chunks.take() : Buffer.allocUnsafe(size)
      const { bytesRead } = await read(fd, chunk, 0, size, start + done)
      if (hangup.gone) return gone()
      if (bytesRead === 0) throw truncatedError(start + done, length - done)
      done += bytesRead
      const bytes = bytesRead < chunk.length ? chunk.subarray(0, bytesRead) : chunk
      if (!(chunks !== null ? res.write(bytes, chunks.giveBack(chunk)) : res.write(bytes)) && done < length) {
        if (!(await drained())) return gone()
      }
    }
  } finally {
    if (chunks !== null) chunks.end()
  }
  if (hangup.gone) return gone()
  res.end()
  return { bytes: done, complete: true }
}

module.exports = { copyToResponse }
