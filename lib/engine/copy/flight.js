'use strict'

// The writes of one copy not yet called back, and how many more bytes it may
// hand to its destination now (range-copy.js says why):
// - what is handed to the destination and not yet written out (writableLength)
//   stays under a window that starts at one piece, doubles each time every
//   write so far called back once the client took RAMP bytes, up to
//   MAX_WINDOW, and starts over at one piece when the writes out did not all
//   call back within STALL_MS (the client stopped reading: stall());
// - where the addon says how much the connection's send buffer takes now
//   (socketRoom, for a destination whose connection's socket the caller names,
//   TLS or not), no more than that, once every write so
//   far called back; less than a piece is read into a buffer of its own
//   (`small`);
// - over TLS, where the kernel's room is known, as much at once as it takes
//   while few TLS copies run: at most their share of BATCH_BUDGET; otherwise
//   (`serial`) at most SERIAL_BATCH at a time, written a piece at a time, each
//   from the last one's write callback (writeSerially).
//
// Everything is driven by callbacks made once per copy: its owner's
// `resume()`, called once every write so far called back after land() said to
// wait, and `batchDone(written)`, once a batch went out. With a crowd of
// clients, a promise, closure or timer per read or per write lives across a
// wait, survives V8's young-generation collections, and makes V8 grow the
// young generation, which stays committed once those clients stall.

const net = require('node:net')
const tls = require('node:tls')
const { pool, PIECE_SIZE } = require('./pieces')
const { socketRoom } = require('../addon-calls')
const { transportFd } = require('../destination')

const MAX_WINDOW = 256 * 1024
const RAMP = 512 * 1024
// A copy whose writes did not all call back in this long has a client that
// stopped reading (see stall()).
const STALL_MS = 1000
// Over TLS, pieces are read at most this many bytes at a time (less where the
// kernel's room says so): they are written one at a time anyway, and the ones
// read ahead only wait. A crowd of clients each with more pieces waiting wants
// more than the pool keeps, so the pool allocates pieces per read and drops
// them once written: garbage outside V8's heap, in the RSS until V8 collects,
// and freed among the connections' buffers in the C heap.
const SERIAL_BATCH = 32 * 1024
// Over TLS, where the kernel's room is known, the bytes handed to TLS sockets
// at once, for all the TLS bodies copying in the process together (each gets
// an even share, in whole pieces, up to MAX_WINDOW): a piece at a time costs an
// event loop turn per 16 KiB, since a TLS socket calls a write back on the
// next turn (1 MiB bodies over TLS at 16 connections: 0.75x nginx's req/s a
// piece at a time, 1.19x with this budget's 64 KiB each). What is handed at
// once is encrypted at once, and the kernel may still refuse it, which it does
// to any socket once its TCP memory is under pressure, whatever room it showed
// (1,000 stalled clients put it there): a stalled client then holds its batch
// twice, plain and encrypted, and the C heap keeps the crowd's peak. So the
// budget bounds both for the whole process; under a crowd the share drops
// under two pieces, and every TLS body goes a piece at a time (`serial`).
// 1,000 stalled TLS clients: 96 KiB of RSS each with 1 MiB, 103 with 2 MiB,
// 115 with 4 MiB, 89 to 95 a piece at a time.
const BATCH_BUDGET = 2 ** 20
// TLS bodies copying now, in the process (those whose Flight knows its socket
// and is not closed).
let tlsCopies = 0

// → the bytes a TLS body may hand over at once now: its share of BATCH_BUDGET.
function batchShare () {
  return Math.min(MAX_WINDOW, Math.floor(BATCH_BUDGET / Math.max(1, tlsCopies) / PIECE_SIZE) * PIECE_SIZE)
}
// The share of the kernel's send buffer room (socketRoom) written at once.
const KERNEL_SHARE = 0.75
// Where the kernel's room is less than a piece, what fits is read in steps of
// this size into a buffer of its own, one step when it takes nothing: the
// write that waits for a client that stopped reading (issue 47). A whole piece
// waiting there held 16 KiB plain and 16 KiB encrypted per stalled client.
const SMALL_STEP = 1024

class Flight {
  // `destination`: a Writable whose writes call back in order. `owner`: {
  // resume(), batchDone(written) }. `stop`: stopped once nothing more is to
  // be written. `socketOf`: () → the connection's socket (null while it has
  // none yet), or null when no socket is to be looked at (a stream that is not
  // one connection's: HTTP/2's). `onStall`: () → true when it dealt with a
  // destination whose writes stopped calling back (it destroyed it), or null.
  constructor (destination, { stop, socketOf, onStall }, owner) {
    this.destination = destination
    this.stop = stop
    this.socketOf = socketOf
    this.onStall = onStall
    this.owner = owner
    this.window = PIECE_SIZE
    this.writes = 0
    this.calledBack = 0
    // The pool's pieces of the writes not called back yet, in order (null for
    // bytes that are not the pool's); the oldest `uncounted` of them left the
    // budget when the client stalled.
    this.pending = []
    this.uncounted = 0
    // Set by knowSocket(), once the destination has its connection.
    this.kernelRoom = null
    this.serial = false
    this.tls = false
    this.socketKnown = false
    this.knowSocket()
    // What the kernel's room, last asked, still takes (kernelCredit()).
    this.credit = 0
    this.stalls = 0
    // The last nextSize() was cut under a piece by the kernel's room.
    this.small = false
    // The owner waits for every write so far to call back (land()): since
    // which stall, and after how many bytes sent, for the window.
    this.landing = false
    this.landingStalls = 0
    this.landingSent = 0
    // A wait for the writes out is on: only then does the stall timer count.
    this.waiting = false
    this.timer = null
    // The batch being written one piece at a time (writeSerially): its
    // buffers, the pool's pieces they are (or null), the bytes to write, the
    // bytes sent before it, the next buffer and the bytes written so far.
    this.batch = null
    this.batchPieces = null
    this.batchBytes = 0
    this.batchSent = 0
    this.batchNext = 0
    this.batchWritten = 0
    this.written = this.written.bind(this)
    this.timedOut = this.timedOut.bind(this)
  }

  // Over TLS one piece is written at a time (unless the kernel's room and
  // BATCH_BUDGET allow more), the next once the last one's write called back
  // (the kernel took it): what is handed to a TLS socket at once is encrypted
  // at once into a buffer of that size, which the connection keeps (256 KiB
  // batches cost 600 KiB of RSS per stalled client, one piece at a time 130
  // KiB; two pieces at a time cost 113 KiB where one costs 90, on
  // 1,000 clients). A destination queued behind another on its connection
  // (an HTTP/1.1 response behind a pipelined one) has no socket yet: it is
  // looked at again on each nextSize() until it has one (what it writes until
  // then waits in the destination).
  knowSocket () {
    if (this.socketOf === null) {
      this.socketKnown = true
      return
    }
    const socket = this.socketOf()
    if (!socket) return
    this.socketKnown = true
    this.kernelRoom = kernelRoomOf(socket)
    this.tls = socket instanceof tls.TLSSocket
    this.serial = this.tls
    if (this.tls) tlsCopies++ // until close()
  }

  // Room for how many more bytes now.
  room () {
    return this.window - this.destination.writableLength
  }

  // How many bytes to read or write next: the room left, in whole pieces, at
  // most `left`; 0 when the window is full. Where the kernel says how much more
  // its send buffer takes, no more than that (less a margin for its overhead
  // and the records' framing); when that is less than a piece, what fits in
  // steps of SMALL_STEP, one step when it takes none, with `small` set: those
  // bytes are read into a buffer of their own size, not a piece. A client that
  // stops reading then has one small write queued in user space, plain and
  // encrypted, and that write's callback says when the kernel took it. Over
  // TLS, where the kernel's room is known, the body's share of BATCH_BUDGET
  // while that is two pieces or more; otherwise SERIAL_BATCH at most, to be
  // written a piece at a time (`serial`).
  nextSize (left) {
    this.small = false
    if (!this.socketKnown) this.knowSocket()
    // Once every write called back nothing of this copy waits: the whole
    // window. (Bun's HTTP response keeps counting written bytes in writableLength,
    // and the copy would ask again and again for room that never comes.)
    const room = this.calledBack === this.writes ? this.window : this.room()
    if (room <= 0) return 0
    let size = Math.ceil(room / PIECE_SIZE) * PIECE_SIZE
    const share = batchShare()
    if (this.tls) this.serial = this.kernelRoom === null || share < 2 * PIECE_SIZE
    if (this.kernelRoom !== null) {
      // Asked only once every write so far called back: the kernel may show
      // room before it wakes Node to write what waits (a quarter of its buffer
      // or more), and what is written meanwhile would queue behind that.
      if (this.calledBack !== this.writes) return 0
      const fits = this.kernelCredit()
      if (fits >= 0) {
        if (fits < PIECE_SIZE) {
          this.small = true
          return Math.min(Math.max(fits - fits % SMALL_STEP, SMALL_STEP), left)
        }
        // Unless `serial`, the kernel's room and the batch budget bound it, not
        // the window (which ramps up from one piece where nothing else says
        // how much a client takes).
        if (!this.serial) size = share
        size = Math.min(size, Math.floor(fits / PIECE_SIZE) * PIECE_SIZE)
      }
    }
    if (this.serial) size = Math.min(size, SERIAL_BATCH)
    return Math.min(size, left)
  }

  // → the bytes the kernel takes now (its share), -1 when not known. The
  // kernel is asked again only once what it said it takes was written: its
  // room only shrinks by what is written (it grows as the client reads), and
  // asking costs two system calls, which at a batch of 32 KiB over TLS took a
  // tenth of the CPU (16 clients of a 1 MiB body).
  kernelCredit () {
    if (this.credit < PIECE_SIZE) {
      const kernel = this.kernelRoom()
      this.credit = kernel < 0 ? -1 : Math.floor(kernel * KERNEL_SHARE)
    }
    return this.credit
  }

  // Writes `bytes`; `piece`, when given, goes back to the pool once Node is done
  // with it (after a failed write Node may still hold it: it is let go).
  write (bytes, piece) {
    if (this.credit > 0) this.credit = Math.max(0, this.credit - bytes.length)
    this.writes++
    this.pending.push(piece)
    this.destination.write(bytes, this.written)
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
      this.grow(this.batchSent + this.batchWritten)
      this.writeNext()
    } else if (this.landing) {
      this.landing = false
      if (this.stalls === this.landingStalls) this.grow(this.landingSent)
      this.owner.resume()
    }
  }

  // The window doubles once the client took RAMP bytes and its writes keep
  // calling back.
  grow (sent) {
    if (sent >= RAMP) this.window = Math.min(this.window * 2, MAX_WINDOW)
  }

  // → true when every write so far called back (the window grown for `sent`,
  // the bytes written so far); false when some did not: the owner's resume()
  // is called once they all did (not when the copy is stopped: its stop says so).
  land (sent) {
    if (this.calledBack === this.writes) {
      this.grow(sent)
      return true
    }
    this.landing = true
    this.landingStalls = this.stalls
    this.landingSent = sent
    this.arm()
    return false
  }

  // → true: the copy may end once its last bytes were handed over (their
  // writes call back as the client reads; the caller ends the destination).
  flushed () {
    return true
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
    // The caller may know why the writes stopped, and end it (an HTTP/2
    // stream closed under its body: lib/http/delivery/response-body.js).
    if (this.onStall !== null && this.onStall()) return
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

  // Writes the first `bytes` bytes of `buffers` (the whole of each, the last
  // one cut), each once the last write called back, from that callback.
  // `pieces`: the pool's pieces they are, or null. `sent`: the bytes written
  // before, for the window. Calls the owner's batchDone(written) once they are
  // written, or fewer when the client stalled or went away first (the pieces
  // not written go back to the pool).
  writeSerially (buffers, pieces, bytes, sent) {
    this.batch = buffers
    this.batchPieces = pieces
    this.batchBytes = bytes
    this.batchSent = sent
    this.batchNext = 0
    this.batchWritten = 0
    this.writeNext()
  }

  // Writes the batch's next piece once every write so far called back; ends
  // the batch once it is all written, or the client went away.
  writeNext () {
    const buffers = this.batch
    while (this.batchWritten < this.batchBytes && this.batchNext < buffers.length && !this.stop.stopped) {
      if (this.calledBack !== this.writes) return this.arm() // written() goes on
      const buffer = buffers[this.batchNext]
      const size = Math.min(buffer.length, this.batchBytes - this.batchWritten)
      this.write(size < buffer.length ? buffer.subarray(0, size) : buffer, this.batchPieces === null ? null : this.batchPieces[this.batchNext])
      this.batchNext++
      this.batchWritten += size
    }
    this.endBatch()
  }

  endBatch () {
    const written = this.batchWritten
    this.dropBatch()
    this.owner.batchDone(written)
  }

  // The batch is over: the pieces not written go back to the pool.
  dropBatch () {
    if (this.batchPieces !== null) {
      for (let i = this.batchNext; i < this.batchPieces.length; i++) pool.give(this.batchPieces[i])
    }
    this.batch = null
    this.batchPieces = null
  }

  // No more waits: the stall timer is let go, and a batch not written.
  close () {
    if (this.tls) {
      this.tls = false
      tlsCopies--
    }
    this.waiting = false
    this.landing = false
    if (this.timer !== null) clearTimeout(this.timer)
    if (this.batch !== null) this.dropBatch()
  }
}

// → () → the bytes the kernel takes now for `socket`'s connection (socketRoom,
// the addon's), or null when that is not known: without the addon, one that
// lacks socketRoom, or a socket that is not a net.Socket (a framework's
// stand-in).
function kernelRoomOf (socket) {
  if (socketRoom === null) return null
  if (!(socket instanceof net.Socket)) return null
  return () => {
    const fd = transportFd(socket)
    return fd < 0 ? -1 : socketRoom(fd)
  }
}

module.exports = { Flight }
