'use strict'

// Read buffers kept between transfers (see response-body.js): a body sent
// through the response object (TLS, compression, HTTP/2) is read in chunks, and
// allocating them anew for each response is a churn of external memory that
// makes V8 run its major collections without pause under load. A chunk is
// given back only once Node is done with its bytes. At most `max` are kept, and
// none once a whole `idleMs` period went by without one taken: a burst of
// clients leaves nothing behind.

class ChunkSpares {
  constructor ({ chunkSize, max, idleMs }) {
    this.chunkSize = chunkSize
    this.max = max
    this.idleMs = idleMs
    this.chunks = []
    this.taken = false // a chunk was taken since the last sweep
    this.sweeper = null
  }

  // How many chunks are kept now.
  get count () {
    return this.chunks.length
  }

  take () {
    this.taken = true
    return this.chunks.length > 0 ? this.chunks.pop() : Buffer.allocUnsafe(this.chunkSize)
  }

  give (chunk) {
    if (this.chunks.length >= this.max) return
    this.chunks.push(chunk)
    if (this.sweeper === null) {
      this.sweeper = setInterval(() => this.sweep(), this.idleMs)
      this.sweeper.unref()
    }
  }

  // Drops every chunk when none was taken since the last sweep.
  sweep () {
    if (this.taken) {
      this.taken = false
      return
    }
    this.chunks.length = 0
    clearInterval(this.sweeper)
    this.sweeper = null
  }
}

module.exports = { ChunkSpares }
