'use strict'

// Pure-JS sendfile with the native contract: read a range into a buffer, write it
// out, repeat. Used when the addon is not loaded, where the kernel refuses a
// descriptor pair, and for a non-regular source (a pipe, a device) into a
// caller's descriptor. It writes to the caller's fd number itself with fs.write
// (no private dup, and never a stream around it: nothing here closes it), and
// waits out EAGAIN on either side with short timers.

const fs = require('node:fs')
const { promisify } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { abortError, truncatedError } = require('./errors')

const read = promisify(fs.read)
const write = promisify(fs.write)

const BUFFER_SIZE = 256 * 1024
const MAX_BACKOFF_MS = 64

const noop = () => {}

function backoff (delay, signal) {
  return sleep(delay, undefined, signal ? { signal } : undefined).catch(() => { throw abortError(signal) })
}

async function writeAll (fd, buffer, signal, onWritten) {
  let written = 0
  let delay = 1
  while (written < buffer.length) {
    if (signal && signal.aborted) throw abortError(signal)
    try {
      const { bytesWritten } = await write(fd, buffer, written, buffer.length - written, null)
      written += bytesWritten
      if (onWritten) onWritten(written)
      delay = 1
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
      await backoff(delay, signal)
      delay = Math.min(delay * 2, MAX_BACKOFF_MS)
    }
  }
}

// Resolves when `promise` does, or rejects with an AbortError as soon as `signal`
// aborts. Only for reads of a non-regular source, which may wait for a writer
// forever: a regular file's read is bounded and is let finish.
function unlessAborted (promise, signal) {
  if (!signal) return promise
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

// One read of a non-regular source at its current position; EAGAIN (an
// O_NONBLOCK pipe with nothing in it yet) is waited out. `inFlight.read` is the
// read in progress (settles, never rejects): an abort does not wait for it, but
// whoever closes the source must, or a read queued on the thread pool could hit
// a reused descriptor number.
async function readStream (fd, buffer, signal, inFlight) {
  let delay = 1
  for (;;) {
    if (signal && signal.aborted) throw abortError(signal)
    try {
      const reading = read(fd, buffer, 0, buffer.length, null)
      if (inFlight) inFlight.read = reading.then(noop, noop)
      return (await unlessAborted(reading, signal)).bytesRead
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
      await backoff(delay, signal)
      delay = Math.min(delay * 2, MAX_BACKOFF_MS)
    }
  }
}

// `head`: bytes written before the file's; `onHeadWritten(bytes)` follows them.
// `length` null: a non-regular source, copied from its current position (the
// offset is ignored) until its end; `inFlight` as for readStream.
async function sendfile (outFd, inFd, offset, length, { signal, onProgress, head, onHeadWritten, inFlight } = {}) {
  if (head) await writeAll(outFd, head, signal, onHeadWritten)
  const size = length === null ? BUFFER_SIZE : Math.max(1, Math.min(BUFFER_SIZE, length))
  const buffer = Buffer.allocUnsafe(size)
  let done = 0
  while (length === null || done < length) {
    if (signal && signal.aborted) throw abortError(signal)
    let bytesRead
    if (length === null) {
      bytesRead = await readStream(inFd, buffer, signal, inFlight)
      if (bytesRead === 0) break
    } else {
      bytesRead = (await read(inFd, buffer, 0, Math.min(buffer.length, length - done), offset + done)).bytesRead
      if (bytesRead === 0) throw truncatedError(offset + done, length - done)
    }
    await writeAll(outFd, buffer.subarray(0, bytesRead), signal)
    done += bytesRead
    if (onProgress) onProgress(done)
  }
  return done
}

module.exports = { sendfile }
