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
// - over TLS the pieces are handed to the socket one at a time, each once the
//   last one's write called back: what a TLS socket is given at once is
//   encrypted at once into a buffer of that size, which the connection keeps
//   (256 KiB at once cost 600 KiB of RSS per stalled client, on 150 clients).
//   They are read two at a time at most (SERIAL_BATCH), and the next one is
//   written from the last one's write callback: no promise or timer per piece;
// - the file is read in pieces from a pool shared by all responses, bounded by
//   a budget for the whole process (ZCOPY_COPY_BUDGET, piece-pool.js): a piece
//   goes back when its write calls back, and only when res.write is Node's own
//   (a middleware that replaced it may call back before it is done with the
//   bytes, or never); past the budget, reads wait for a piece to come back. The
//   pieces of a response that stalled leave the budget (they stay with Node
//   until its client reads or leaves, and are not reused): clients that stop
//   reading can never spend the budget of those that read. Pieces read and not
//   written when it stalled go back, and are read again when it goes on;
// - once the pool saw a whole idle period, it lets its spares go and has the
//   addon hand the C heap's free pages back to the system (trimMemory), and
//   again after V8's next full collection: the TLS buffers of a crowd of
//   clients, freed among allocations that stay (most of them only once V8
//   collects the connections' objects), would otherwise keep the process at
//   the crowd's size.
// A body from memory (bodies kept by the open-file cache) goes out in the same
// window, in views of the cached bytes (over TLS one piece at a time): nothing
// is copied, and its encrypted copy is bounded as a file's is.
// write()'s return value and 'drain' are the only backpressure used with a
// response whose write was replaced (middleware does not always call write
// callbacks); its pieces are allocated per read, as the middleware copies them.

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const net = require('node:net')
const tls = require('node:tls')
const { PerformanceObserver, constants: perfConstants } = require('node:perf_hooks')
const { promisify } = require('node:util')
const { PiecePool } = require('./piece-pool')
const { copyBudget } = require('./copy-budget')
const { native, transportFd, truncatedError } = require('../engine')

const read = promisify(fs.read)
const readv = promisify(fs.readv)

const PIECE_SIZE = 16 * 1024
const MAX_WINDOW = 256 * 1024
const RAMP = 512 * 1024
// A response whose writes did not all call back in this long has a client that
// stopped reading (see Flight.stall).
const STALL_MS = 1000
// Over TLS, pieces are read at most this many bytes at a time (less where the
// kernel's room says so): they are written one at a time anyway, and the ones
// read ahead only wait. A crowd of clients each with more pieces waiting wants
// more than the pool keeps, so the pool allocates pieces per read and drops
// them once written: garbage outside V8's heap, in the RSS until V8 collects,
// and freed among the connections' buffers in the C heap.
const SERIAL_BATCH = 32 * 1024
// The share of the kernel's send buffer room (socketRoom) written at once.
const KERNEL_SHARE = 0.75
// Where the kernel's room is less than a piece, what fits is read in steps of
// this size into a buffer of its own, one step when it takes nothing: the
// write that waits for a client that stopped reading (issue 47). A whole piece
// waiting there held 16 KiB plain and 16 KiB encrypted per stalled client.
const SMALL_STEP = 1024
// A response whose write was replaced (compression middleware) is read in
// chunks of this size, allocated per read.
const CHUNK_SIZE = 64 * 1024

const socketRoom = native !== null && typeof native.socketRoom === 'function' ? native.socketRoom : null
const trimMemory = native !== null && typeof native.trimMemory === 'function' ? native.trimMemory : null
const pool = new PiecePool({
  pieceSize: PIECE_SIZE,
  budget: copyBudget(),
  keep: 256,
  idleMs: 2000,
  onIdle: trimMemory === null ? null : trimNowAndAfterCollection
})

// What a crowd of clients' connections held in the C heap (OpenSSL's and
// Node's TLS buffers) is freed only when V8 collects their objects, and an
// idle process collects late (V8's memory reducer: 10 to 30 s after the
// clients left, measured on 1,000 TLS clients), after the pool's trim ran. So
// the C heap is trimmed once more after the next full collection, if the pool
// is still idle then: a 'gc' PerformanceObserver (public API) watches for it,
// from the pool's idle sweep until then.
let collectionWatch = null
function trimNowAndAfterCollection () {
  trimMemory()
  if (collectionWatch !== null) return
  collectionWatch = new PerformanceObserver((list) => {
    if (!list.getEntries().some((entry) => entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)) return
    collectionWatch.disconnect()
    collectionWatch = null
    if (pool.idle) trimMemory()
  })
  collectionWatch.observe({ entryTypes: ['gc'] })
}
const OWN_WRITES = new Set([http.ServerResponse.prototype.write, http2.Http2ServerResponse.prototype.write])

// The writes of one response not yet called back. The bytes it holds, handed
// to res and not yet written out (res.writableLength), are kept under a window
// (see above); past it, the next read waits until every write so far called
// back. Writes call back in order.
//
// Its callbacks and its one stall timer are made once per response, not per
// write: with a crowd of clients each piece's promises, closures and timers
// live across a wait, survive V8's young-generation collections, and make it
// grow the heap that stays committed once those clients stall.
class Flight {
  constructor (res, hangup) {
    this.res = res
    this.hangup = hangup
    this.window = PIECE_SIZE
    this.writes = 0
    this.calledBack = 0
    this.wake = null
    // The pool's pieces of the writes not called back yet, in order (null for
    // bytes that are not the pool's); the oldest `uncounted` of them left the
    // budget when the client stalled.
    this.pending = []
    this.uncounted = 0
    this.kernelRoom = kernelRoomOf(res)
    // Over TLS one piece is written at a time, the next once the last one's
    // write called back (the kernel took it): what is handed to a TLS socket at
    // once is encrypted at once into a buffer of that size, which the
    // connection keeps (256 KiB batches cost 600 KiB of RSS per stalled client,
    // one piece at a time 130 KiB).
    this.serial = res instanceof http.ServerResponse && res.socket instanceof tls.TLSSocket
    this.stalls = 0
    // The last nextSize() was cut under a piece by the kernel's room.
    this.small = false
    // A wait for the writes out is on: only then does the stall timer count.
    this.waiting = false
    this.timer = null
    // The batch being written one piece at a time (writeSerially), or null.
    this.batch = null
    this.written = this.written.bind(this)
    this.timedOut = this.timedOut.bind(this)
    this.setWake = (done) => { this.wake = done }
    this.startBatch = (done) => {
      this.batch.done = done
      this.writeNext()
    }
  }

  // Room for how many more bytes now.
  room () {
    return this.window - this.res.writableLength
  }

  // Writes `bytes`; `piece`, when given, goes back to the pool once Node is done
  // with it (after a failed write Node may still hold it: it is let go).
  write (bytes, piece) {
    this.writes++
    this.pending.push(piece)
    this.res.write(bytes, this.written)
  }

  // Every write's callback: writes call back in order.
  written (err) {
    const piece = this.pending.shift()
    if (this.uncounted > 0) this.uncounted--
    else if (piece !== null && err) pool.forget()
    else if (piece !== null) pool.give(piece)
    if (++this.calledBack !== this.writes) return
    this.waiting = false
    if (this.batch !== null) {
      this.grow(this.batch.sent + this.batch.written)
      this.writeNext()
    } else if (this.wake !== null) {
      const wake = this.wake
      this.wake = null
      wake()
    }
  }

  // The window doubles once the client took RAMP bytes and its writes keep
  // calling back.
  grow (sent) {
    if (sent >= RAMP) this.window = Math.min(this.window * 2, MAX_WINDOW)
  }

  // Starts a wait for the writes out: the stall timer counts from now.
  arm () {
    this.waiting = true
    if (this.timer === null) {
      this.timer = setTimeout(this.timedOut, STALL_MS)
      this.timer.unref()
    } else {
      this.timer.refresh()
    }
  }

  // The writes out did not all call back within STALL_MS of the wait's start.
  timedOut () {
    if (!this.waiting) return
    // An HTTP/2 stream closed under its body (the client's session went
    // away gracefully) waits to flush what it holds into a window that
    // never opens; Node 20.17 and 22.5 then never emit 'close', the writes
    // never call back, and the session stays: the stream is destroyed.
    if (this.res instanceof http2.Http2ServerResponse && this.res.stream.closed) {
      this.res.destroy()
      return
    }
    this.waiting = false
    this.stall()
    if (this.batch !== null) this.endBatch()
  }

  // The client stopped reading: what is out is let go from the budget (it stays
  // with Node until the client reads or leaves, and is not reused then), so
  // that clients that read still get pieces; the window starts over at one piece.
  stall () {
    this.stalls++
    this.window = PIECE_SIZE
    for (let i = this.uncounted; i < this.pending.length; i++) {
      if (this.pending[i] !== null) pool.forget()
    }
    this.uncounted = this.pending.length
  }

  // → Promise<boolean>: true once every write so far called back, false when the
  // client went away first. `sent`: the bytes written so far, for the window.
  async land (sent) {
    if (this.calledBack !== this.writes) {
      const stalls = this.stalls
      this.arm()
      const landed = await this.hangup.wait(this.setWake)
      this.waiting = false
      if (!landed) return false
      if (this.stalls !== stalls) return !this.hangup.gone
    }
    this.grow(sent)
    return !this.hangup.gone
  }

  // Writes the first `bytes` bytes of `buffers` (the whole of each, the last
  // one cut), each once the last write called back, from that callback: no
  // promise or timer per piece. `pieces`: the pool's pieces they are, or null.
  // `sent`: the bytes written before, for the window. → Promise of the bytes
  // handed to res, fewer than `bytes` when the client stalled first (the
  // pieces not written go back to the pool), 0 when it went away.
  async writeSerially (buffers, pieces, bytes, sent) {
    const batch = { buffers, pieces, bytes, sent, next: 0, written: 0, done: null }
    this.batch = batch
    const on = await this.hangup.wait(this.startBatch)
    this.batch = null // the client went away: nothing more is written
    if (pieces !== null) {
      for (let i = batch.next; i < pieces.length; i++) pool.give(pieces[i])
    }
    return on && !this.hangup.gone ? batch.written : 0
  }

  // Writes the batch's next piece once every write so far called back; ends
  // the batch once it is all written, or the client went away.
  writeNext () {
    const batch = this.batch
    while (batch.written < batch.bytes && batch.next < batch.buffers.length && !this.hangup.gone) {
      if (this.calledBack !== this.writes) return this.arm() // written() goes on
      const buffer = batch.buffers[batch.next]
      const size = Math.min(buffer.length, batch.bytes - batch.written)
      this.write(size < buffer.length ? buffer.subarray(0, size) : buffer, batch.pieces === null ? null : batch.pieces[batch.next])
      batch.next++
      batch.written += size
    }
    this.endBatch()
  }

  endBatch () {
    const batch = this.batch
    this.batch = null
    batch.done()
  }

  // No more waits: the stall timer is let go.
  close () {
    this.waiting = false
    if (this.timer !== null) clearTimeout(this.timer)
  }
}

// → () → the bytes the kernel takes now for `res`'s connection (socketRoom,
// the addon's), or null when that is not known: without the addon, or one that
// lacks socketRoom, over HTTP/2 (each stream's flow control decides there).
function kernelRoomOf (res) {
  if (socketRoom === null || !(res instanceof http.ServerResponse)) return null
  const socket = res.socket
  if (!(socket instanceof net.Socket)) return null
  return () => {
    const fd = transportFd(socket)
    return fd < 0 ? -1 : socketRoom(fd)
  }
}

// How many bytes to read or write next: the room left, in whole pieces, at
// most what remains; 0 when the window is full. Where the kernel says how much
// more its send buffer takes, no more than that (less a margin for its
// overhead and the records' framing); when that is less than a piece, what
// fits in steps of SMALL_STEP, one step when it takes none, with
// flight.small set: those bytes are read into a buffer of their own size, not
// a piece (readSmall). A client that stops reading then has one small write
// queued in user space, plain and encrypted, and that write's callback says
// when the kernel took it. Over TLS, SERIAL_BATCH at most.
function nextSize (flight, left) {
  flight.small = false
  const room = flight.room()
  if (room <= 0) return 0
  let size = Math.ceil(room / PIECE_SIZE) * PIECE_SIZE
  if (flight.kernelRoom !== null) {
    // Asked only once every write so far called back: the kernel may show room
    // before it wakes Node to write what waits (a quarter of its buffer or more),
    // and what is written meanwhile would queue behind that.
    if (flight.calledBack !== flight.writes) return 0
    const kernel = flight.kernelRoom()
    if (kernel >= 0) {
      const fits = Math.floor(kernel * KERNEL_SHARE)
      if (fits < PIECE_SIZE) {
        flight.small = true
        return Math.min(Math.max(fits - fits % SMALL_STEP, SMALL_STEP), left)
      }
      size = Math.min(size, Math.floor(fits / PIECE_SIZE) * PIECE_SIZE)
    }
  }
  if (flight.serial) size = Math.min(size, SERIAL_BATCH)
  return Math.min(size, left)
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
  pool.touch()
  return { bytes, complete: false }
}

function finish (res, hangup, bytes) {
  if (hangup.gone) return gone(bytes)
  pool.touch()
  res.end()
  return { bytes, complete: true }
}

// Up to `count` pieces once the budget gives some back (pool.take
// gave none). → Promise of the pieces, or of null when the client went away
// first.
async function waitForPieces (count, hangup) {
  for (;;) {
    if (!(await hangup.wait((done) => pool.waitForPiece().then(done)))) return null
    const pieces = pool.take(count)
    if (pieces.length > 0) return pieces
  }
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

// Reads up to `bytes` bytes at `position` into pieces and writes them to res.
// → Promise of the bytes written: 0 when the client went away, fewer than read
// when, over TLS, it stalled first. Every piece goes back to the pool, now or
// once written.
async function readAndWrite (fd, position, bytes, flight, sent) {
  const { hangup } = flight
  const count = Math.ceil(bytes / PIECE_SIZE)
  let pieces = pool.take(count) // none when the budget is spent
  if (pieces.length === 0) pieces = await waitForPieces(count, hangup)
  if (pieces === null) return 0
  const wanted = Math.min(bytes, pieces.length * PIECE_SIZE) // the budget may give fewer
  let bytesRead
  try {
    ({ bytesRead } = await readv(fd, toFill(pieces, wanted), position))
  } catch (err) {
    for (const piece of pieces) pool.give(piece)
    throw err
  }
  if (bytesRead === 0 && !hangup.gone) {
    for (const piece of pieces) pool.give(piece)
    throw truncatedError(position, wanted)
  }
  if (flight.serial) return flight.writeSerially(pieces, pieces, bytesRead, sent)
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
  return hangup.gone ? 0 : written
}

// Reads up to `bytes` bytes (less than a piece: the kernel's room, nextSize)
// at `position` into a buffer of that size, not the pool's, and writes them.
// → Promise of the bytes written (0: the client went away).
async function readSmall (fd, position, bytes, flight) {
  const { hangup } = flight
  const { bytesRead, buffer } = await read(fd, Buffer.allocUnsafeSlow(bytes), 0, bytes, position)
  if (hangup.gone) return 0
  if (bytesRead === 0) throw truncatedError(position, bytes)
  flight.write(bytesRead < bytes ? buffer.subarray(0, bytesRead) : buffer, null)
  return bytesRead
}

// Writes bytes [start, start + length) of `fd` to `res`, then ends it. → Promise
// of { bytes, complete }: the bytes handed to res.write(), and false when the
// client went away first (nothing more is written then). Rejects on a read error
// or a file shorter than the range; the caller destroys the response.
async function copyToResponse (fd, start, length, res, hangup) {
  if (!OWN_WRITES.has(res.write)) return copyThroughMiddleware(fd, start, length, res, hangup)
  const flight = new Flight(res, hangup)
  try {
    let done = 0
    while (done < length) {
      if (hangup.gone) return gone(done)
      const size = nextSize(flight, length - done)
      if (size === 0) {
        if (!(await flight.land(done))) return gone(done)
        continue
      }
      // 0 when the client went away, or (over TLS) stalled before a piece of
      // this read went out: the next round waits for it.
      done += flight.small
        ? await readSmall(fd, start + done, size, flight)
        : await readAndWrite(fd, start + done, size, flight, done)
    }
    return finish(res, hangup, done)
  } finally {
    flight.close()
  }
}

// Writes `bytes` (a body from memory) to `res` in views of it, under the same
// window, then ends it. → Promise of { bytes, complete } as copyToResponse.
async function writeToResponse (bytes, res, hangup) {
  const flight = new Flight(res, hangup)
  try {
    let done = 0
    while (done < bytes.length) {
      if (hangup.gone) return gone(done)
      const size = flight.serial && flight.calledBack !== flight.writes ? 0 : nextSize(flight, bytes.length - done)
      if (size === 0) {
        if (!(await flight.land(done))) return gone(done)
        continue
      }
      if (flight.serial) {
        done += await flight.writeSerially(viewsOf(bytes, done, size), null, size, done)
      } else {
        flight.write(bytes.subarray(done, done + size), null)
        done += size
      }
    }
    return finish(res, hangup, done)
  } finally {
    flight.close()
  }
}

// Views of `bytes` [start, start + size), a piece each.
function viewsOf (bytes, start, size) {
  const views = []
  for (let at = start; at < start + size; at += PIECE_SIZE) views.push(bytes.subarray(at, Math.min(at + PIECE_SIZE, start + size)))
  return views
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
