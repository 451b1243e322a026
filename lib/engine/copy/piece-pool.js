'use strict'

// The read buffers of copies through user space paced by a Flight (TLS,
// HTTP/2, the pure-JS fallback; see range-copy.js): pieces of one size, shared
// by every copy of the process.
//
// - A budget bounds the bytes all copies together hold read ahead: pieces
//   taken and not given back yet (read, or handed to res.write and not written
//   out). Past it, take() gives nothing and whenPiece() waits for one to come
//   back: nothing fails, and the copies whose clients read get their pieces
//   back first, so they go on first.
// - Pieces given back are kept for the next reads (allocating a buffer per read
//   is a churn of external memory that makes V8 collect without pause under load
//   and leaves the heap fragmented), up to `keep`, and none once a whole `idleMs`
//   went by without one taken, given back or let go, nor a copy ending
//   (touch()): a burst of clients leaves nothing behind. `onIdle`, when given,
//   is called then, once per burst (pieces.js hands the C heap's free
//   pages back to the system there).

class PiecePool {
  constructor ({ pieceSize, budget, keep, idleMs, onIdle = null }) {
    this.pieceSize = pieceSize
    this.limit = Math.max(1, Math.floor(budget / pieceSize))
    this.keep = keep
    this.idleMs = idleMs
    this.out = 0 // pieces taken and not given back
    this.spares = []
    this.waiters = []
    this.onIdle = onIdle
    this.active = false // a piece was taken or came back since the last sweep
    this.sweeper = null
  }

  // Bytes held read ahead now, and kept for reuse.
  get held () {
    return this.out * this.pieceSize
  }

  // True from a sweep that found nothing happening until the next piece taken,
  // given back or let go, or copy ended (touch()).
  get idle () {
    return this.sweeper === null
  }

  get kept () {
    return this.spares.length * this.pieceSize
  }

  // → up to `count` pieces (at least one), or an empty array when the budget is
  // spent (then whenPiece()).
  take (count) {
    const granted = Math.min(count, this.limit - this.out)
    const pieces = []
    for (let i = 0; i < granted; i++) pieces.push(this.spares.pop() ?? Buffer.allocUnsafeSlow(this.pieceSize))
    this.out += pieces.length
    if (pieces.length > 0) this.touch()
    return pieces
  }

  // Calls `callback` once a piece came back (take() may then give one), in the
  // order of the calls, one callback per piece.
  whenPiece (callback) {
    this.waiters.push(callback)
  }

  // A wait given up (its copy ended): the next piece back goes to the
  // next waiter.
  cancelWait (callback) {
    const at = this.waiters.indexOf(callback)
    if (at >= 0) this.waiters.splice(at, 1)
  }

  give (piece) {
    this.out--
    if (this.spares.length < this.keep) this.spares.push(piece)
    this.touch()
    const waiter = this.waiters.shift()
    if (waiter !== undefined) waiter()
  }

  // A piece Node may still read (its write failed): it no longer counts, and is
  // not reused.
  forget () {
    this.out--
    this.touch()
    const waiter = this.waiters.shift()
    if (waiter !== undefined) waiter()
  }

  // Something happened (a piece taken, back, let go; a copy ended): the
  // burst is not over.
  touch () {
    this.active = true
    if (this.sweeper !== null) return
    this.sweeper = setInterval(() => this.sweep(), this.idleMs)
    this.sweeper.unref()
  }

  // Drops every spare, and calls onIdle, when nothing happened since the last
  // sweep.
  sweep () {
    if (this.active) {
      this.active = false
      return
    }
    this.spares.length = 0
    clearInterval(this.sweeper)
    this.sweeper = null
    if (this.onIdle !== null) this.onIdle()
  }
}

module.exports = { PiecePool }
