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
//   (256 KiB at once cost 600 KiB of RSS per stalled client, on 150 clients);
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
// Over TLS without socketRoom, pieces are read this many bytes at a time: they
// are written one at a time anyway, and the fewer out at once, the fewer freed
// among the connections' buffers when a crowd of clients stops reading (the C
// heap is not trimmed then either).
const SERIAL_BATCH = 64 * 1024
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
class Flight {
  constructor (res, hangup) {
    this.res = res
    this.hangup = hangup
    this.window = PIECE_SIZE
    this.writes = 0
    this.calledBack = 0
    this.wake = null
    // The pool's pieces of the writes not called back yet, in order: { piece,
    // counted } (piece null for bytes that are not the pool's).
    this.pending = []
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
  }

  // Room for how many more bytes now.
  room () {
    return this.window - this.res.writableLength
  }

  // Writes `bytes`; `piece`, when given, goes back to the pool once Node is done
  // with it (after a failed write Node may still hold it: it is let go).
  write (bytes, piece) {
    const id = ++this.writes
    const entry = { piece, counted: piece !== null }
    this.pending.push(entry)
    this.res.write(bytes, (err) => {
      this.pending.shift() // this one: writes call back in order
      if (entry.counted) {
        if (err) pool.forget()
        else pool.give(entry.piece)
      }
      this.calledBack = id
      if (this.wake !== null && id === this.writes) {
        const wake = this.wake
        this.wake = null
        wake()
      }
    })
  }

  // The client stopped reading: what is out is let go from the budget (it stays
  // with Node until the client reads or leaves, and is not reused then), so
  // that clients that read still get pieces; the window starts over at one piece.
  stall () {
    this.stalls++
    this.window = PIECE_SIZE
    for (const entry of this.pending) {
      if (!entry.counted) continue
      entry.counted = false
      pool.forget()
    }
  }

  // → Promise<boolean>: true once every write so far called back, false when the
  // client went away first. `sent`: the bytes written so far, for the window.
  // `untilStall`: true as soon as the client stalled too (this.stalls changed).
  async land (sent, untilStall = false) {
    let stalled = false
    if (this.calledBack !== this.writes) {
      const timer = setTimeout(() => {
        // An HTTP/2 stream closed under its body (the client's session went
        // away gracefully) waits to flush what it holds into a window that
        // never opens; Node 20.17 and 22.5 then never emit 'close', the writes
        // never call back, and the session stays: the stream is destroyed.
        if (this.res instanceof http2.Http2ServerResponse && this.res.stream.closed) {
          this.res.destroy()
          return
        }
        stalled = true
        this.stall()
        if (untilStall && this.wake !== null) {
          const wake = this.wake
          this.wake = null
          wake()
        }
      }, STALL_MS)
      timer.unref()
      const landed = await this.hangup.wait((done) => { this.wake = done })
      clearTimeout(timer)
      if (!landed) return false
    }
    if (sent >= RAMP && !stalled) this.window = Math.min(this.window * 2, MAX_WINDOW)
    return !this.hangup.gone
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
// when the kernel took it.
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
  } else if (flight.serial) {
    size = Math.min(size, SERIAL_BATCH)
  }
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
async function readAndWrite (fd, position, bytes, flight, sent) {
  const { hangup } = flight
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
  let stopped = false // the client left, or stopped reading: the rest goes back unwritten
  for (const piece of pieces) {
    const size = Math.min(PIECE_SIZE, bytesRead - written)
    if (!stopped && size > 0 && flight.serial && flight.calledBack !== flight.writes) {
      const stalls = flight.stalls
      stopped = !(await flight.land(sent + written, true)) || flight.stalls !== stalls
    }
    if (stopped || size <= 0 || hangup.gone) {
      pool.give(piece)
      continue
    }
    flight.write(size < PIECE_SIZE ? piece.subarray(0, size) : piece, piece)
    written += size
  }
  if (bytesRead === 0 && !hangup.gone) throw truncatedError(position, wanted)
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
  let done = 0
  while (done < length) {
    if (hangup.gone) return gone(done)
    const size = nextSize(flight, length - done)
    if (size === 0) {
      if (!(await flight.land(done))) return gone(done)
      continue
    }
    const written = flight.small
      ? await readSmall(fd, start + done, size, flight)
      : await readAndWrite(fd, start + done, size, flight, done)
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
    const size = flight.serial && flight.calledBack !== flight.writes ? 0 : nextSize(flight, bytes.length - done)
    if (size === 0) {
      if (!(await flight.land(done))) return gone(done)
      continue
    }
    const part = flight.serial ? Math.min(size, PIECE_SIZE) : size
    flight.write(bytes.subarray(done, done + part), null)
    done += part
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
