'use strict'

// zcopy.sendfile(outFd, inFd, offset, length, { signal, onProgress }) → Promise<bytes>
// The raw transfer: native sendfile(2) on private dups when the addon is loaded,
// the pure-JS fallback otherwise. Arguments are checked synchronously.

const { native } = require('./binding')
const fallback = require('./fallback')
const { abortError } = require('./errors')
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

// Starts a transfer and returns { done, abort, headWritten, settled }. `head` (a
// Buffer or null) is written before the file's bytes, in the same packet on a
// socket; `done` resolves with the file bytes moved, and headWritten() tells how
// much of the head is out. `done` rejects with code 'ABORT_ERR' after abort().
// settled() is true when `done` is already settled: a small cached range was sent
// from the event loop during this call, so there is nothing left to cancel. No
// AbortSignal is involved: listening on one costs more than sending a small file,
// so callers hook their own sources of cancellation (a user's signal, a closing
// socket) to abort(), and only when settled() is false.
function startTransfer (outFd, inFd, offset, length, onProgress, head = null) {
  if (native) {
    const transfer = new native.Transfer(outFd, inFd, offset, length, CHUNK_SIZE, onProgress, head)
    return {
      done: transfer.start(),
      abort: () => transfer.abort(),
      headWritten: () => transfer.headWritten(),
      settled: () => transfer.settled()
    }
  }
  return startFallbackTransfer(outFd, inFd, offset, length, onProgress, head)
}

// The pure-JS copy loop behind the same interface (also used where the kernel
// refuses a descriptor pair).
function startFallbackTransfer (outFd, inFd, offset, length, onProgress, head = null) {
  const controller = new AbortController()
  let headWritten = 0
  const onHeadWritten = (bytes) => { headWritten = bytes }
  return {
    done: fallback.sendfile(outFd, inFd, offset, length, { signal: controller.signal, onProgress, head, onHeadWritten }),
    abort: () => controller.abort(),
    headWritten: () => headWritten,
    settled: () => false
  }
}

// Runs a started transfer with `signal` hooked to it; an abort rejects with an
// AbortError carrying the signal's reason.
async function withSignal (transfer, signal) {
  if (!signal) return transfer.done
  signal.addEventListener('abort', transfer.abort, { once: true })
  try {
    return await transfer.done
  } catch (err) {
    throw signal.aborted ? abortError(signal) : err
  } finally {
    signal.removeEventListener('abort', transfer.abort)
  }
}

function sendfile (outFd, inFd, offset, length, options = {}) {
  validateFd('outFd', outFd)
  validateFd('inFd', inFd)
  validateInteger('offset', offset)
  validateInteger('length', length)
  validateObject('options', options)
  const signal = validateAbortSignal('options.signal', options.signal)
  const onProgress = validateOptionalFunction('options.onProgress', options.onProgress)

  if (signal && signal.aborted) return Promise.reject(abortError(signal))
  return withSignal(startTransfer(outFd, inFd, offset, length, onProgress), signal)
}

module.exports = { sendfile, startFallbackTransfer, startTransfer }
