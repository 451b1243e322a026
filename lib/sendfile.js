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

async function nativeSendfile (outFd, inFd, offset, length, signal, onProgress) {
  const transfer = new native.Transfer(outFd, inFd, offset, length, CHUNK_SIZE, onProgress)
  const onAbort = () => transfer.abort()
  if (signal) signal.addEventListener('abort', onAbort, { once: true })
  try {
    return await transfer.start()
  } catch (err) {
    throw err.code === 'ABORT_ERR' ? abortError(signal) : err
  } finally {
    if (signal) signal.removeEventListener('abort', onAbort)
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
  if (native) return nativeSendfile(outFd, inFd, offset, length, signal, onProgress)
  return fallback.sendfile(outFd, inFd, offset, length, { signal, onProgress })
}

module.exports = { sendfile }
