'use strict'

// The body through the response object itself, for whatever stands behind it:
// TLS, compression middleware that replaced write/end, Node's chunked framing, an
// HTTP/2 compat response. No stream is put in between, so nothing here can emit
// an 'error' nobody listens to. A client that goes away ends the transfer quietly.
//
// What a client that stops reading costs (issue 47). Over TLS every byte handed
// to res.write() is encrypted at once, and both copies, the plain one (until
// its write calls back) and the encrypted one (queued below the TLS socket), are
// held until the client reads; over HTTP/2 the bytes wait in the stream. So:
// - what is handed to the response and not yet written out (res.writableLength)
//   is kept under a window, and the next pieces are read only when there is room
//   in it. The window starts at one piece (16 KiB, one TLS record), doubles
//   each time every write so far called back once the client took RAMP bytes,
//   up to MAX_WINDOW, and starts over at one piece when the writes out did not
//   all call back within STALL_MS (the client stopped reading);
// - where the addon says how much the connection's send buffer takes now
//   (socketRoom; HTTP/1.1, TLS or not), no more than that is read and written,
//   once every write so far called back; when that is less than a piece, what
//   fits is read into a buffer of its own size (1 KiB when nothing fits): a
//   client that stops reading has one such write queued in user space for it,
//   1 KiB plain and its encrypted copy, and no piece of the pool;
// - over TLS, what a socket is given at once is encrypted at once, and held
//   twice if the kernel refuses it (256 KiB at once cost 600 KiB of RSS per
//   stalled client, on 150 clients). Where the kernel's room is known, as
//   much as it takes is handed over at once while few TLS bodies copy, each
//   within its share of a budget for the process (flight.js, BATCH_BUDGET);
//   otherwise the pieces go one at a time, read two at a time at most
//   (SERIAL_BATCH), each written from the last one's write callback;
// - the file is read in pieces from a pool shared by all responses, bounded by
//   a budget for the whole process (ZCOPY_COPY_BUDGET, piece-pool.js): a piece
//   goes back when its write calls back, and only when res.write is Node's own
//   (a middleware that replaced it may call back before it is done with the
//   bytes, or never); past the budget, reads wait for a piece to come back. The
//   pieces of a response that stalled leave the budget (they stay with Node
//   until its client reads or leaves, and are not reused): clients that stop
//   reading can never spend the budget of those that read. Pieces read and not
//   written when it stalled go back, and are read again when it goes on;
// - once the pool saw a whole idle period, it lets its spares go, and the C
//   heap's free pages go back to the system (shared-pieces.js);
// - each step (a read, a wait for writes to call back, for the budget) is
//   started from the callback of the last, with callbacks made once per
//   response (flight.js): one promise per response, none per read. With 1,000
//   stalled TLS clients, a promise and async frame per read, alive across
//   V8's young-generation collections, made V8 double its young generation
//   (51 MiB of heap committed against 27 for a server writing from memory).
// A body from memory (bodies kept by the open-file cache) goes out in the same
// window, in views of the cached bytes (over TLS as a file's pieces go): nothing
// is copied, and its encrypted copy is bounded as a file's is.
// write()'s return value and 'drain' are the only backpressure used with a
// response whose write was replaced (middleware does not always call write
// callbacks); its pieces are allocated per read, as the middleware copies them.

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const { promisify } = require('node:util')
const { Flight } = require('./flight')
const { promiseOf } = require('../promise-of')
const { pool, PIECE_SIZE } = require('./shared-pieces')
const { truncatedError } = require('../../engine')

const read = promisify(fs.read)

// A response whose write was replaced (compression middleware) is read in
// chunks of this size, allocated per read.
const CHUNK_SIZE = 64 * 1024

const OWN_WRITES = new Set([http.ServerResponse.prototype.write, http2.Http2ServerResponse.prototype.write])

// One response's body, handed to res.write() under its Flight's window, a
// step at a time, each step started from the callback of the last. `result`
// (once step() was called) resolves with { bytes, complete } (the bytes handed
// to res.write(), and false when the client went away first), or rejects with
// a read error or a file shorter than the body; never while a read of the file
// is in flight.
class BodyCopy {
  constructor (res, hangup, length) {
    this.res = res
    this.hangup = hangup
    this.length = length
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    this.done = 0 // bytes handed to res.write()
    this.reading = false
    this.ended = false
    this.flight = new Flight(res, hangup, this)
    this.step = this.step.bind(this)
    // What calls step() from another's callback (a write's, the pool's, a
    // 'close' listener) has it run once that callback returned, as an await
    // did. Written to from inside a write callback, a Node 24 HTTP/2 stream
    // sometimes kept a write that never called back, and its session stayed
    // open after the client cut it (hang-up.test, 2 runs in 3 on 24.21).
    this.stepSoon = () => queueMicrotask(this.step)
    hangup.watch(this.stepSoon)
  }

  // Goes on until it has to wait: for a read, for writes to call back, for
  // the budget. Whatever ends that wait calls it again (the hangup too).
  step () {
    if (this.ended || this.reading) return
    try {
      for (;;) {
        if (this.hangup.gone) return this.end(null, gone(this.done))
        if (this.done >= this.length) return this.end(null, finish(this.res, this.hangup, this.done))
        const size = this.nextSize()
        if (size === 0) {
          if (!this.flight.land(this.done)) return // resume() goes on
          continue
        }
        if (!this.send(size)) return
      }
    } catch (err) {
      this.end(err)
    }
  }

  nextSize () {
    return this.flight.nextSize(this.length - this.done)
  }

  // The Flight's: every write so far called back.
  resume () {
    this.stepSoon()
  }

  // The Flight's: a batch went out (`written` bytes of it).
  batchDone (written) {
    this.done += written
    this.stepSoon()
  }

  end (err, result) {
    this.ended = true
    this.flight.close()
    this.hangup.watch(null)
    pool.touch()
    if (err) this.reject(err)
    else this.resolve(result)
  }
}

// Bytes [start, start + length) of `fd`, read into the pool's pieces (fewer
// than a piece, where the kernel's room says so, into a buffer of their size).
class FileCopy extends BodyCopy {
  constructor (fd, start, length, res, hangup) {
    super(res, hangup, length)
    this.fd = fd
    this.start = start
    this.pieces = null // being read into
    this.wanted = 0 // bytes asked of that read
    this.smallBuffer = null
    this.waitingForPiece = false
    this.wake = () => {
      this.waitingForPiece = false
      this.stepSoon()
    }
    this.onRead = this.onRead.bind(this)
    this.onSmallRead = this.onSmallRead.bind(this)
  }

  // Starts reading `size` bytes. → false: the read's callback goes on.
  send (size) {
    const position = this.start + this.done
    if (this.flight.small) {
      this.smallBuffer = Buffer.allocUnsafeSlow(size)
      this.reading = true
      fs.read(this.fd, this.smallBuffer, 0, size, position, this.onSmallRead)
      return false
    }
    const pieces = pool.take(Math.ceil(size / PIECE_SIZE)) // none when the budget is spent
    if (pieces.length === 0) {
      this.waitingForPiece = true
      pool.whenPiece(this.wake)
      return false
    }
    this.pieces = pieces
    this.wanted = Math.min(size, pieces.length * PIECE_SIZE) // the budget may give fewer
    this.reading = true
    fs.readv(this.fd, toFill(pieces, this.wanted), position, this.onRead)
    return false
  }

  // The pieces read are written: one at a time where the Flight is `serial`
  // (its batch), else at once. Every piece goes back to the pool, now or once written.
  onRead (err, bytesRead) {
    this.reading = false
    const pieces = this.pieces
    this.pieces = null
    if (err || bytesRead === 0 || this.hangup.gone) {
      for (const piece of pieces) pool.give(piece)
      if (err) return this.end(err)
      if (bytesRead === 0 && !this.hangup.gone) return this.end(truncatedError(this.start + this.done, this.wanted))
      return this.step()
    }
    try {
      if (this.flight.serial) return this.flight.writeSerially(pieces, pieces, bytesRead, this.done)
      let written = 0
      for (const piece of pieces) {
        const size = Math.min(PIECE_SIZE, bytesRead - written)
        if (size <= 0) {
          pool.give(piece)
          continue
        }
        this.flight.write(size < PIECE_SIZE ? piece.subarray(0, size) : piece, piece)
        written += size
      }
      this.done += written
    } catch (err) {
      return this.end(err)
    }
    this.step()
  }

  onSmallRead (err, bytesRead) {
    this.reading = false
    const buffer = this.smallBuffer
    this.smallBuffer = null
    if (err) return this.end(err)
    if (this.hangup.gone) return this.step()
    if (bytesRead === 0) return this.end(truncatedError(this.start + this.done, buffer.length))
    try {
      this.flight.write(bytesRead < buffer.length ? buffer.subarray(0, bytesRead) : buffer, null)
    } catch (err) {
      return this.end(err)
    }
    this.done += bytesRead
    this.step()
  }

  end (err, result) {
    if (this.waitingForPiece) pool.cancelWait(this.wake)
    super.end(err, result)
  }
}

// A body from memory (bodies kept by the open-file cache), in views of it:
// nothing is copied. Where the Flight is `serial`, one batch once every write
// so far called back.
class MemoryCopy extends BodyCopy {
  constructor (bytes, res, hangup) {
    super(res, hangup, bytes.length)
    this.bytes = bytes
  }

  nextSize () {
    if (this.flight.serial && this.flight.calledBack !== this.flight.writes) return 0
    return super.nextSize()
  }

  // → true when the bytes were handed to res at once.
  send (size) {
    const { bytes, done, flight } = this
    if (flight.serial) {
      flight.writeSerially(viewsOf(bytes, done, size), null, size, done)
      return false
    }
    flight.write(bytes.subarray(done, done + size), null)
    this.done += size
    return true
  }
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

// `pieces` for readv to fill with `wanted` bytes: the last one cut.
function toFill (pieces, wanted) {
  const last = pieces.length - 1
  const tail = wanted - last * PIECE_SIZE
  if (tail === PIECE_SIZE) return pieces
  const buffers = pieces.slice()
  buffers[last] = pieces[last].subarray(0, tail)
  return buffers
}

// Views of `bytes` [start, start + size), a piece each.
function viewsOf (bytes, start, size) {
  const views = []
  for (let at = start; at < start + size; at += PIECE_SIZE) views.push(bytes.subarray(at, Math.min(at + PIECE_SIZE, start + size)))
  return views
}

// Writes bytes [start, start + length) of `fd` to `res`, then ends it. → Promise
// of { bytes, complete }: the bytes handed to res.write(), and false when the
// client went away first (nothing more is written then). Rejects on a read error
// or a file shorter than the range; the caller destroys the response.
function copyToResponse (fd, start, length, res, hangup) {
  if (!OWN_WRITES.has(res.write)) return copyThroughMiddleware(fd, start, length, res, hangup)
  return promiseOf(() => {
    const copy = new FileCopy(fd, start, length, res, hangup)
    copy.step()
    return copy.result
  })
}

// Writes `bytes` (a body from memory) to `res` in views of it, under the same
// window, then ends it. → Promise of { bytes, complete } as copyToResponse.
function writeToResponse (bytes, res, hangup) {
  return promiseOf(() => {
    const copy = new MemoryCopy(bytes, res, hangup)
    copy.step()
    return copy.result
  })
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

module.exports = { copyToResponse, writeToResponse }
