'use strict'

// zcopy.sendfile(outFd, inFd, offset, length, { signal, onProgress }) → Promise<bytes>
// The raw transfer: native sendfile(2) on private dups when the addon is loaded,
// the pure-JS fallback otherwise. Arguments are checked synchronously.
// Also the owner of a transfer's life (Job), shared with pipeFile and sendRange.

const { native } = require('./binding')
const fallback = require('./fallback')
const { abortError, prematureCloseError } = require('./errors')
const {
  validateAbortSignal,
  validateFd,
  validateInteger,
  validateObject,
  validateOptionalFunction
} = require('./validate')

// Bytes one thread-pool job moves at most: small enough that a huge copy never
// holds a pool thread for long, large enough that the hops are noise.
const CHUNK_SIZE = 4 * 1024 * 1024

// Starts a transfer of { outFd, inFd, offset, length, onProgress, head } and
// returns { done, abort, headWritten, settled }. `head` (a Buffer, or null or
// absent for none) is written before the file's bytes, in the same packet on a
// socket; `done` resolves with the file bytes moved, and headWritten() tells how
// much of the head is out. `done` rejects with code 'ABORT_ERR' after abort().
// settled() is true when `done` is already settled: a small cached range was sent
// from the event loop during this call, so there is nothing left to cancel. No
// AbortSignal is involved: listening on one costs more than sending a small file,
// so the Job below hooks the sources of cancellation (a user's signal, a closing
// socket) to abort(), and only when settled() is false. `job` (optional) gets the
// transfer's abort before start() runs, so an abort from inside onProgress during
// start() reaches it.
function startTransfer (args, job = null) {
  if (!native) return startFallbackTransfer(args, job)
  const { outFd, inFd, offset, length, onProgress, head = null } = args
  return new NativeHandle(new native.Transfer({ outFd, inFd, offset, length, chunkSize: CHUNK_SIZE, onProgress, head }), job)
}

// The handle of a native transfer (see startTransfer), started by the constructor.
class NativeHandle {
  constructor (transfer, job) {
    this.transfer = transfer
    this.done = null
    this.abort = () => transfer.abort() // called unbound, as a Job's cancel
    if (job !== null) job.cancel = this.abort
    this.done = transfer.start()
  }

  headWritten () { return this.transfer.headWritten() }
  settled () { return this.transfer.settled() }
  takeOpened () { return this.transfer.takeOpened() }
}

// startTransfer for pipeFile's file destinations ({ outFd, inFd, offset, length,
// onProgress, head }), with either end given as a path (and -1 as its
// descriptor): the addon opens it in the pool job that copies the
// first chunk and closes it in the one that copies the last, so a small copy is
// one pool job, as fs.copyFile is. `ends` is { sourcePath, destinationPath, end }
// (end inclusive, -1 for the end of the file); with a source path, `length` is
// fixed by the addon once the file is open. `done` rejects with code
// ERR_ZCOPY_NOT_REGULAR when an end it opened is not a regular file (a FIFO, a
// device), and takeOpened() then hands over what it opened: [sourceFd,
// destinationFd] (-1: none), the caller's to close; likewise after an
// EINVAL/ENOSYS/ENOTSUP before any byte (a caller's O_APPEND descriptor).
function startOpeningTransfer ({ outFd, inFd, offset, length, onProgress, head }, ends, job) {
  const { sourcePath, destinationPath, end } = ends
  return new NativeHandle(new native.Transfer({
    outFd, inFd, offset, length, chunkSize: CHUNK_SIZE, onProgress, head, sourcePath, destinationPath, end
  }), job)
}

// The pure-JS copy loop behind the same interface, with the same arguments
// (also used where the kernel refuses a descriptor pair, and with `length` null
// for a non-regular source).
// `inFlight.read`: see fallback.js; the Job takes it into account in idle().
function startFallbackTransfer ({ outFd, inFd, offset, length, onProgress, head = null }, job = null) {
  const controller = new AbortController()
  let headWritten = 0
  const onHeadWritten = (bytes) => { headWritten = bytes }
  const inFlight = { read: null }
  const handle = {
    done: null,
    abort: () => controller.abort(),
    headWritten: () => headWritten,
    settled: () => false,
    inFlight
  }
  if (job !== null) job.cancel = handle.abort
  handle.done = fallback.sendfile(outFd, inFd, offset, length,
    { signal: controller.signal, onProgress, head, onHeadWritten, inFlight })
  return handle
}

// The owner of one transfer's life: created → starting → waiting (for a socket, a
// stream) → running (pool / loop) → done. One abort path, abort(reason), for the
// caller's signal, a closing socket and the caller alike, in every state; the
// first reason wins and is what the transfer rejects with, even if the bytes
// went out meanwhile (until done). One settle point, finish(), after which
// aborts are ignored. Listeners are attached only when the transfer has to wait
// for something (hook()): a small file sent during start() never pays for them.
// A running transfer is stopped, not abandoned: its promise settles when its
// descriptors are no longer in use, so the caller may close them then.
const CREATED = 0
const STARTING = 1
const WAITING = 2
const RUNNING = 3
const DONE = 4

class Job {
  constructor (signal = null, socket = null) {
    this.signal = signal || null // the caller's AbortSignal
    this.socket = socket // a socket whose closing aborts the transfer
    this.state = CREATED
    this.reason = null // the error an abort rejects with
    this.cancel = null // stops (or stops waiting for) the current step
    this.current = null // the running transfer handle
    this.listener = null // set while hooked
    this.pending = null // see idle()
  }

  get aborted () {
    return this.reason !== null
  }

  // The one abort path. No-op once done, or when already aborted.
  abort (reason = abortError()) {
    if (this.state === DONE || this.reason !== null) return
    this.reason = reason
    if (this.cancel !== null) this.cancel()
  }

  // Throws the abort reason, if any (a signal that fired while nothing listened
  // included): at each point where the transfer moves on.
  check () {
    if (this.reason === null && this.signal !== null && this.signal.aborted) this.abort(abortError(this.signal))
    if (this.reason !== null) throw this.reason
  }

  // Listens to the caller's signal and the socket's 'close' until finish(); an
  // abort that already happened (a signal that fired during start(), a socket
  // already destroyed) is taken at once.
  hook () {
    if (this.listener !== null || this.state === DONE) return
    const { signal, socket } = this
    if (signal === null && socket === null) return // nothing to listen to
    const listener = this.listener = () => {
      this.abort(signal !== null && signal.aborted ? abortError(signal) : prematureCloseError())
    }
    if (signal !== null) {
      signal.addEventListener('abort', listener, { once: true })
      if (signal.aborted) this.abort(abortError(signal))
    }
    if (socket !== null) {
      socket.once('close', listener)
      if (socket.destroyed) this.abort(prematureCloseError())
    }
  }

  // The settle point: no abort is taken after it, listeners are gone.
  finish () {
    this.state = DONE
    this.cancel = null
    const { listener } = this
    if (listener === null) return
    if (this.signal !== null) this.signal.removeEventListener('abort', listener)
    if (this.socket !== null) this.socket.off('close', listener)
  }

  // `promise`, with finish() run once it settles, whichever way.
  finishAfter (promise) {
    return promise.then((value) => {
      this.finish()
      return value
    }, (err) => {
      this.finish()
      throw err
    })
  }

  // Waits for `promise`, or rejects with the abort reason as soon as an abort
  // comes, after calling `stop()` if given. For what holds no descriptor the
  // caller could close (a socket's queued writes, a stream's 'ready'), or whose
  // stop makes it let go of them soon (a stream copy, stopped by destroying its
  // destination): idle() tells when it is over.
  wait (promise, stop = null) {
    this.hook()
    if (this.reason !== null) {
      if (stop !== null) stop()
      this.abandon(promise)
      return Promise.reject(this.reason)
    }
    this.state = WAITING
    return new Promise((resolve, reject) => {
      const cancel = this.cancel = () => {
        if (stop !== null) stop()
        this.abandon(promise)
        reject(this.reason)
      }
      const settle = (err, value) => {
        if (this.cancel === cancel) this.cancel = null
        if (this.reason !== null) reject(this.reason)
        else if (err !== null) reject(err)
        else resolve(value)
      }
      promise.then((value) => settle(null, value), (err) => settle(err === null ? new Error('null rejection') : err))
    })
  }

  abandon (promise) {
    this.pending = promise.then(noop, noop)
  }

  // → a promise of the moment nothing started by this transfer still uses its
  // source (a read of a pipe, a stream copy that an abort did not wait for), or
  // null when that is already so: close a source opened for it after that.
  idle () {
    const { current, pending } = this
    const read = current !== null && current.inFlight ? current.inFlight.read : null
    if (read === null) return pending
    return pending === null ? read : Promise.all([read, pending])
  }

  // Runs a transfer: `start(job)` is startTransfer/startFallbackTransfer bound to
  // its arguments. → the transfer's promise of bytes itself when it settled during
  // start() untouched by an abort (the hot path: no listener, no extra promise),
  // else a promise that settles when the transfer stops, with the abort reason if
  // an abort came first.
  run (start) {
    if (this.reason !== null) return Promise.reject(this.reason)
    this.state = STARTING
    const transfer = this.current = start(this)
    if (transfer.settled() && this.reason === null && (this.signal === null || !this.signal.aborted)) {
      this.cancel = null
      return transfer.done
    }
    this.state = RUNNING
    this.cancel = transfer.abort
    if (this.reason !== null) transfer.abort() // came during start(), when the transfer could not take it yet
    this.hook()
    return transfer.done.then((bytes) => {
      this.cancel = null
      if (this.reason !== null) throw this.reason
      return bytes
    }, (err) => {
      this.cancel = null
      throw this.reason !== null ? this.reason : err
    })
  }
}

const noop = () => {}

function sendfile (outFd, inFd, offset, length, options = {}) {
  validateFd('outFd', outFd)
  validateFd('inFd', inFd)
  validateInteger('offset', offset)
  validateInteger('length', length)
  validateObject('options', options)
  const signal = validateAbortSignal('options.signal', options.signal)
  const onProgress = validateOptionalFunction('options.onProgress', options.onProgress)

  if (signal && signal.aborted) return Promise.reject(abortError(signal))
  const job = new Job(signal)
  const done = job.run((job) => startTransfer({ outFd, inFd, offset, length, onProgress, head: null }, job))
  if (signal === null || signal === undefined) return done
  return job.finishAfter(done)
}

module.exports = { Job, sendfile, startFallbackTransfer, startOpeningTransfer, startTransfer }
