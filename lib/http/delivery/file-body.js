'use strict'

// A file answer's body as a Readable, for a framework whose hooks or middleware
// see the body before it goes out and may replace it: Fastify's onSend hooks
// (@fastify/compress, a hook reading payload.path), Koa's middleware after
// `await next()` (koa-compress). What ends up as the body goes out:
// - sent straight into its own response (nothing replaced it), it is sent the
//   way zcopy sends any body (send-body.js: sendfile where it can): by pipe(res)
//   (Fastify pipes it), or sendStraight() (zcopy/koa, when Koa answers). Not
//   when the response declares trailers, nor into a pipe() that leaves the
//   response open (stream.pipeline: it would end the response on 'end', which
//   cannot wait for a transfer the client may see finished first);
// - read or piped anywhere else (a compression stream), it reads its range in
//   chunks, as fs.createReadStream would.
// `path` is the file's, as on fs.ReadStream and @fastify/send's stream.
//
// `done`: a promise of what onSent hears, settled once the descriptor is no
// longer used: the body went out (or its client went away); the stream ended
// or was destroyed (by the framework once the response closed, or by whoever
// replaced it); or the response closed while nobody read it. It rejects only
// when sending it straight failed midway (the response is then destroyed):
// whoever hands the body over reports that.

const { Readable } = require('node:stream')
const { readAt, truncatedError } = require('../../engine')
const { watchHangup } = require('./hangup')
const { sendBody } = require('./send-body')

const READ_SIZE = 64 * 1024

class FileBody extends Readable {
  // `file`: { path, fd, start, end }, an inclusive range of an open descriptor
  // kept open until `done` settles; { path } alone is an empty body (HEAD's).
  // `ownEncoding`: the Content-Encoding on `res`, if any, is one zcopy chose.
  constructor (req, res, { path, fd = -1, start = 0, end = -1 }, ownEncoding = false) {
    super({ highWaterMark: READ_SIZE })
    this.path = path
    this.req = req
    this.res = res
    this.fd = fd
    this.position = start
    this.last = end
    this.ownEncoding = ownEncoding
    this.bytesRead = 0
    this.reading = false // a read of the descriptor is in flight
    this.straight = false // piped straight into its response
    this.result = null // what `done` settles with, once known
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve
      this.rejectDone = reject
    })
    // Destroyed (and so released) when its client goes away while nobody
    // reads it. A response that has its socket closes with it; one queued
    // behind a pipelined response gets neither socket nor 'close' if the
    // connection goes first, and is watched as transfers are (hangup.js).
    this.onClose = () => this.destroy()
    this.hangup = res.socket ? null : watchHangup(req, res)
    if (this.hangup === null) res.once('close', this.onClose)
    else if (this.hangup.stopped) process.nextTick(this.onClose)
    else this.hangup.watch(this.onClose)
    this.once('end', () => this.finish({ bytes: this.bytesRead, zeroCopy: false, complete: true }))
  }

  pipe (destination, options) {
    if (destination !== this.res || (options !== undefined && options.end === false) || !this.canSendStraight()) {
      return super.pipe(destination, options)
    }
    this.sendStraight()
    // Ended at once, empty: 'end' comes on the next tick, before the response
    // can finish (its end() waits at least for the transfer's promise), so that
    // a framework watching both (Fastify's sendStream) sees it done, not closed
    // early.
    this.push(null)
    this.read()
    return destination
  }

  // Whether sendStraight() may take it: nobody read it or piped it yet, and its
  // response declares no trailers (sendfile cannot append them).
  canSendStraight () {
    return this.readableFlowing === null && !this.destroyed && this.bytesRead === 0 && !this.reading &&
      !this.res.hasHeader('trailer')
  }

  // Sends the range into its response itself, which it then ends. The stream
  // itself is left as it is (destroyed by whoever owns it once the response is
  // done).
  sendStraight () {
    this.straight = true
    this.unwatch()
    if (this.position > this.last) {
      this.res.end()
      this.settle({ bytes: 0, zeroCopy: false, complete: true })
      return
    }
    sendBody(this.req, this.res, this.fd, { start: this.position, end: this.last }, { ownEncoding: this.ownEncoding })
      .then((sent) => this.settle(sent), (err) => this.settle(null, err))
  }

  unwatch () {
    if (this.hangup === null) this.res.off('close', this.onClose)
    else this.hangup.dispose()
  }

  _read () {
    const size = Math.min(READ_SIZE, this.last - this.position + 1)
    if (size <= 0) {
      this.push(null)
      return
    }
    const chunk = Buffer.allocUnsafe(size)
    this.reading = true
    readAt(this.fd, chunk, this.position, (err, bytesRead) => {
      this.reading = false
      if (this.destroyed) return this.settleIfDone()
      if (err) return this.destroy(err)
      if (bytesRead === 0) return this.destroy(truncatedError(this.position, this.last - this.position + 1))
      this.position += bytesRead
      this.bytesRead += bytesRead
      this.push(bytesRead < size ? chunk.subarray(0, bytesRead) : chunk)
    })
  }

  _destroy (err, callback) {
    this.finish({ bytes: this.bytesRead, zeroCopy: false, complete: false })
    callback(err)
  }

  // Read to its end, or destroyed: settles `done` once no read is in flight.
  // Piped straight, sendBody settles it instead.
  finish (result) {
    if (this.straight) return
    this.unwatch()
    if (this.result === null) this.result = result
    this.settleIfDone()
  }

  settleIfDone () {
    if (!this.reading && this.result !== null) this.settle(this.result)
  }

  settle (sent, err) {
    if (this.resolveDone === null) return
    const resolve = this.resolveDone
    const reject = this.rejectDone
    this.resolveDone = this.rejectDone = null
    if (err !== undefined) reject(err)
    else resolve(sent)
  }
}

// A body from the memory cache, for the same frameworks: a view of the cached
// bytes (a framework writes a Buffer with the head, no stream in between)
// carrying the file's `path`, as a FileBody does.
function bytesBody (bytes, path) {
  const body = bytes.subarray()
  body.path = path
  return body
}

module.exports = { FileBody, bytesBody }
