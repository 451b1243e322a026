'use strict'

// zcopy.createReadStream(path, options): an fs.ReadStream in every way, except that
// when it is piped (.pipe() or stream.pipeline()) into a destination the kernel can
// take before any data has been read, the bytes move with sendfile instead.

const fs = require('node:fs')
const { once } = require('node:events')
const { pipeFile } = require('./pipe-file')
const { classifyDestination, supportsZeroCopy } = require('./destination')
const { validateAbortSignal } = require('./validate')
const { invalidArgValue } = require('./errors')

const DESTINATION_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET'])

class ZeroCopyReadStream extends fs.ReadStream {
  #zeroCopy = false
  #customFs

  constructor (path, options) {
    // Node's Readable takes any object with `aborted` and fails later, in a way
    // nobody can catch, when it has no addEventListener: refused here instead.
    if (options !== null && typeof options === 'object') {
      validateAbortSignal('options.signal', options.signal)
      // Node before 22.13 (and 20.x before 20.19) turns a symbol or a null-prototype
      // object into a string to check it, and throws a TypeError without a code;
      // later releases refuse every non-string as Node does here.
      if (options.encoding && typeof options.encoding !== 'string') {
        throw invalidArgValue('encoding', options.encoding, 'is invalid encoding')
      }
    }
    super(path, options)
    this.#customFs = typeof options === 'object' && options !== null && options.fs !== undefined
  }

  // True once the stream has handed its bytes to sendfile instead of emitting them.
  get zeroCopy () {
    return this.#zeroCopy
  }

  // Nothing consumed yet, nothing buffered, one destination, and the kernel can take it.
  #canHandOff (destination) {
    if (this.#zeroCopy || this.#customFs || this.destroyed) return false
    if (this.readableFlowing !== null || this.readableLength > 0 || this.bytesRead > 0) return false
    let target
    try {
      target = classifyDestination(destination)
    } catch {
      return false
    }
    return (target.kind === 'socket' || target.kind === 'file-stream') && supportsZeroCopy(target)
  }

  pipe (destination, options) {
    if (!this.#canHandOff(destination)) return super.pipe(destination, options)
    this.#zeroCopy = true
    destination.emit('pipe', this)
    this.#handOff(destination, !options || options.end !== false)
    return destination
  }

  async #handOff (destination, endDestination) {
    try {
      if (this.fd === null) await once(this, 'open')
    } catch {
      return // the stream reported its open error itself
    }
    let moved = 0
    let failure = null
    try {
      await pipeFile(this.fd, destination, {
        start: this.start === undefined ? 0 : this.start,
        end: this.end,
        onProgress: (bytes) => { moved = bytes }
      })
    } catch (err) {
      failure = err
    }
    this.bytesRead += moved
    // A file that got shorter ends early, as fs.ReadStream does; a destination that
    // went away unpipes quietly, as .pipe() does; anything else errors the stream.
    if (failure && failure.code !== 'ERR_ZCOPY_TRUNCATED') {
      this.destroy(DESTINATION_GONE.has(failure.code) ? undefined : failure)
      return
    }
    this.push(null)
    this.resume()
    if (endDestination && !destination.destroyed) destination.end()
  }

  _read (size) {
    if (!this.#zeroCopy) super._read(size)
  }
}

function createReadStream (path, options) {
  return new ZeroCopyReadStream(path, options)
}

module.exports = { createReadStream, ZeroCopyReadStream }
