'use strict'

// The body through the response object itself, for whatever stands behind it:
// TLS, compression middleware that replaced write/end, Node's chunked framing, an
// HTTP/2 compat response. No stream is put in between, so nothing here can emit
// an 'error' nobody listens to. A client that goes away ends the transfer quietly.
//
// What a client that stops reading costs (issue 47). Over TLS every byte handed
// to res.write() is encrypted at once, and both copies, the plain one (until
// its write calls back) and the encrypted one (queued below the TLS socket), are
// held until the client reads; over HTTP/2 the bytes wait in the stream. So the
// bytes handed to the response and not yet written out (res.writableLength) are
// kept under a window, and the next piece is read only when there is room in it:
// - the window starts at one piece (16 KiB, one TLS record) and stays there
//   until the client has taken RAMP bytes, more than the kernel's buffers hold
//   for a client that does not read: such a client costs one piece and its
//   encrypted copy, plus what Node's TLS socket holds anyway;
// - past that it doubles each time every write so far has called back, up to
//   MAX_WINDOW, so a client that keeps up gets big writes (many TLS records per
//   system call);
// - the file is read in pieces from a pool shared by all responses, bounded by
//   a budget for the whole process (ZCOPY_COPY_BUDGET, piece-pool.js): a piece
//   goes back when its write calls back, and only when res.write is Node's own
//   (a middleware that replaced it may call back before it is done with the
//   bytes, or never); past the budget, reads wait for a piece to come back.
// A body from memory (bodies kept by the open-file cache) goes out in the same
// window, in views of the cached bytes: nothing is copied, and its encrypted
// copy is bounded as a file's is.
// write()'s return value and 'drain' are the only backpressure used with a
// response whose write was replaced (middleware does not always call write
// callbacks); its pieces are allocated per read, as the middleware copies them.

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const { promisify } = require('node:util')
const { truncatedError } = require('../engine')
const { PiecePool } = require('./piece-pool')
const { copyBudget } = require('./copy-budget')

const read = promisify(fs.read)
const readv = promisify(fs.readv)

const PIECE_SIZE = 16 * 1024
const MAX_WINDOW = 256 * 1024
const RAMP = 512 * 1024
// A response whose write was replaced (compression middleware) is read in
// chunks of this size, allocated per read.
const CHUNK_SIZE = 64 * 1024

const pool = new PiecePool({ pieceSize: PIECE_SIZE, budget: copyBudget(), keep: 1024, idleMs: 10_000 })
const OWN_WRITES = new Set([http.ServerResponse.prototype.write, http2.Http2ServerResponse.prototype.write])

// The writes of one response not yet called back. The bytes it holds, handed
// to res and not yet written out (res.writableLength), are kept under a window
// (see above); past it, the next read waits until every write so far called
// back. Writes call back in order.
class Flight {
  constructor (res, hangup) {
    this.res = res
    this.hangup = hangup
    this.window = PIECE_SIZE
    this.writes = 0
    this.calledBack = 0
    this.wake = null
  }

  // Room for how many more bytes now.
  room () {
    return this.window - this.res.writableLength
  }

  // Writes `bytes`; `piece`, when given, goes back to the pool once Node is done
  // with it (after a failed write Node may still hold it: it is let go).
  write (bytes, piece) {
    const id = ++this.writes
    this.res.write(bytes, (err) => {
      if (piece !== null) {
        if (err) pool.forget()
        else pool.give(piece)
      }
      this.calledBack = id
      if (this.wake !== null && id === this.writes) {
        const wake = this.wake
        this.wake = null
        wake()
      }
    })
  }

  // → Promise<boolean>: true once every write so far called back, false when the
  // client went away first. `sent`: the bytes written so far, for the window.
  async land (sent) {
    if (this.calledBack !== this.writes && !(await this.hangup.wait((done) => { this.wake = done }))) return false
    if (sent >= RAMP) this.window = Math.min(this.window * 2, MAX_WINDOW)
    return !this.hangup.gone
  }
}

// How many bytes to read or write next: the room left, in whole pieces, at
// most what remains; 0 when the window is full.
function nextSize (flight, left) {
  const room = flight.room()
  if (room <= 0) return 0
  return Math.min(Math.ceil(room / PIECE_SIZE) * PIECE_SIZE, left)
}

// Middleware such as compression() forwards res.on('drain') to its own stream
// and offers no way to remove the listener: one lasting listener, added when
// needed. → () → Promise<boolean> (false: the client went away first).
function drainWaiter (res, hangup) {
  let onDrain = null
  return () => hangup.wait((done) => {
    if (onDrain === null) res.on('drain', () => onDrain())
    onDrain = done
  })
}

function gone (bytes) {
  return { bytes, complete: false }
}

function finish (res, hangup, bytes) {
  if (hangup.gone) return gone(bytes)
  res.end()
  return { bytes, complete: true }
}

// Pieces for up to `bytes` bytes, waiting for the budget when it is spent. →
// Promise of the pieces, or null when the client went away first.
async function takePieces (bytes, hangup) {
  const count = Math.ceil(bytes / PIECE_SIZE)
  for (;;) {
    const pieces = pool.take(count)
    if (pieces.length > 0) return pieces
    if (!(await hangup.wait((done) => pool.waitForPiece().then(done)))) return null
  }
}

// Reads up to `bytes` bytes at `position` into pieces and writes them to res.
// → Promise of the bytes written (0: the client went away). Every piece goes back
// to the pool, now or once written.
async function readAndWrite (fd, position, bytes, flight, hangup) {
  const pieces = await takePieces(bytes, hangup)
  if (pieces === null) return 0
  const wanted = Math.min(bytes, pieces.length * PIECE_SIZE) // the budget may give fewer
  const last = pieces.length - 1
  const tail = wanted - last * PIECE_SIZE
  const buffers = tail < PIECE_SIZE ? [...pieces.slice(0, last), pieces[last].subarray(0, tail)] : pieces
  let bytesRead
  try {
    ({ bytesRead } = await readv(fd, buffers, position))
  } catch (err) {
    for (const piece of pieces) pool.give(piece)
    throw err
  }
  let written = 0
  for (const piece of pieces) {
    const size = Math.min(PIECE_SIZE, bytesRead - written)
    if (size <= 0 || hangup.gone) {
      pool.give(piece)
      continue
    }
    flight.write(size < PIECE_SIZE ? piece.subarray(0, size) : piece, piece)
    written += size
  }
  if (bytesRead === 0 && !hangup.gone) throw truncatedError(position, wanted)
  return hangup.gone ? 0 : written
}

// Writes bytes [start, start + length) of `fd` to `res`, then ends it. → Promise
// of { bytes, complete }: the bytes handed to res.write(), and false when the
// client went away first (nothing more is written then). Rejects on a read error
// or a file shorter than the range; the caller destroys the response.
async function copyToResponse (fd, start, length, res, hangup) {
  if (!OWN_WRITES.has(res.write)) return copyThroughMiddleware(fd, start, length, res, hangup)
  const flight = new Flight(res, hangup)
  let done = 0
  while (done < length) {
    if (hangup.gone) return gone(done)
    const size = nextSize(flight, length - done)
    if (size === 0) {
      if (!(await flight.land(done))) return gone(done)
      continue
    }
    const written = await readAndWrite(fd, start + done, size, flight, hangup)
    if (written === 0) return gone(done)
    done += written
  }
  return finish(res, hangup, done)
}

// Writes `bytes` (a body from memory) to `res` in views of it, under the same
// window, then ends it. → Promise of { bytes, complete } as copyToResponse.
async function writeToResponse (bytes, res, hangup) {
  const flight = new Flight(res, hangup)
  let done = 0
  while (done < bytes.length) {
    if (hangup.gone) return gone(done)
    const size = nextSize(flight, bytes.length - done)
    if (size === 0) {
      if (!(await flight.land(done))) return gone(done)
      continue
    }
    flight.write(bytes.subarray(done, done + size), null)
    done += size
  }
  return finish(res, hangup, done)
}

// For a response whose write was replaced: chunks allocated per read, written
// while write() says there is room, then after 'drain'.
async function copyThroughMiddleware (fd, start, length, res, hangup) {
  const drained = drainWaiter(res, hangup)
  let done = 0
  while (done < length) {
    if (hangup.gone) return gone(done)
    const size = Math.min(CHUNK_SIZE, length - done)
    const { bytesRead, buffer } = await read(fd, Buffer.allocUnsafe(size), 0, size, start + done)
    if (hangup.gone) return gone(done)
    if (bytesRead === 0) throw truncatedError(start + done, length - done)
    done += bytesRead
    if (!res.write(bytesRead < size ? buffer.subarray(0, bytesRead) : buffer) && done < length) {
      if (!(await drained())) return gone(done)
    }
  }
  return finish(res, hangup, done)
}

module.exports = { copyToResponse, writeToResponse, PIECE_SIZE }
