'use strict'

// The pacing of a copy into a Writable whose write callbacks are not relied
// on for room (range-copy.js): pipeFile's streams, and a response whose write
// a middleware replaced (compression() calls back early, or never). It writes
// while write() says there is room, then waits for 'drain'; what it writes is
// read into buffers of its own (`small`), `chunkSize` at a time, since the
// destination may keep them. With `flushes`, every write is given a callback
// and the copy ends only once they all called back (the last bytes were
// handed on, as pipeFile promises); the first write's error is thrown to the
// owner at its next step (never while it reads).
//
// The 'drain' listener, added on the first wait, is removed at the end; it may
// stay all the same (compression() forwards res.on('drain') to a stream of its
// own, and the removal goes nowhere): it does nothing once the copy ended.

class DrainPace {
  // `owner`: { resume() }.
  constructor (destination, { chunkSize, flushes = false }, owner) {
    this.destination = destination
    this.chunkSize = chunkSize
    this.flushes = flushes
    this.owner = owner
    this.small = true
    this.serial = false
    this.waiting = false // for 'drain'
    this.listening = false
    this.landing = false // for every write to call back
    this.writes = 0
    this.calledBack = 0
    this.failure = null
    this.closed = false
    this.drained = this.drained.bind(this)
    this.written = this.written.bind(this)
  }

  // How many bytes to read and write next, at most `left`: 0 while write()
  // said there is no room.
  nextSize (left) {
    if (this.failure !== null) throw this.failure
    return this.waiting ? 0 : Math.min(this.chunkSize, left)
  }

  // → true when there is room; false: the owner's resume() is called on 'drain'.
  land () {
    if (!this.waiting) return true
    if (!this.listening) {
      this.listening = true
      this.destination.on('drain', this.drained)
    }
    return false
  }

  drained () {
    if (!this.waiting || this.closed) return
    this.waiting = false
    this.owner.resume()
  }

  write (bytes) {
    this.writes++
    const room = this.flushes ? this.destination.write(bytes, this.written) : this.destination.write(bytes)
    if (!room) this.waiting = true
  }

  written (err) {
    this.calledBack++
    if (err && this.failure === null) this.failure = err
    if (this.closed) return
    if (this.landing && (this.calledBack === this.writes || err)) {
      this.landing = false
      this.owner.resume()
    }
  }

  // → true when the copy may end: every write called back (with `flushes`);
  // false: the owner's resume() is called once they did.
  flushed () {
    if (this.failure !== null) throw this.failure
    if (!this.flushes || this.calledBack === this.writes) return true
    this.landing = true
    return false
  }

  close () {
    this.closed = true
    if (this.listening) this.destination.off('drain', this.drained)
  }
}

module.exports = { DrainPace }
