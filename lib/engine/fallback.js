'use strict'

// Pure-JS sendfile with the native contract: read a range into a buffer, write it
// out, repeat. Used when the addon is not loaded, where the kernel refuses a
// descriptor pair, and for a non-regular source (a pipe, a device) into a
// caller's descriptor. It writes to the caller's fd number itself with fs.write
// (no private dup, and never a stream around it: nothing here closes it), and
// waits out EAGAIN on either side with short timers.

const fs = require('node:fs')
const { promisify } = require('node:util')
const { backoff, nextDelay } = require('./backoff')
const { abortError, truncatedError } = require('./errors')
const { readAt } = require('./read-range')
const { openReader } = require('./stream-source')

const read = promisify(readAt)
const write = promisify(fs.write)

const BUFFER_SIZE = 256 * 1024

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
      delay = nextDelay(delay)
    }
  }
}

// `head`: bytes written before the file's; `onHeadWritten(bytes)` follows them.
// `length` null: a non-regular source, copied from its current position (the
// offset is ignored) until its end, read without blocking the pool
// (stream-source.js); `inFlight.read` is set to a read of the caller's own
// descriptor still queued on the pool, when one is: an abort does not wait for
// it, but whoever closes the source must, or it could hit a reused number.
async function sendfile (outFd, inFd, offset, length, { signal, onProgress, head, onHeadWritten, inFlight } = {}) {
  if (head) await writeAll(outFd, head, signal, onHeadWritten)
  if (length === null) return copyStream(outFd, inFd, signal, onProgress, inFlight)
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(BUFFER_SIZE, length)))
  let done = 0
  while (done < length) {
    if (signal && signal.aborted) throw abortError(signal)
    const size = Math.min(buffer.length, length - done)
    const bytesRead = await read(inFd, size < buffer.length ? buffer.subarray(0, size) : buffer, offset + done)
    if (bytesRead === 0) throw truncatedError(offset + done, length - done)
    await writeAll(outFd, buffer.subarray(0, bytesRead), signal)
    done += bytesRead
    if (onProgress) onProgress(done)
  }
  return done
}

async function copyStream (outFd, inFd, signal, onProgress, inFlight) {
  const reader = await openReader(inFd)
  let done = 0
  try {
    for (;;) {
      if (signal && signal.aborted) throw abortError(signal)
      const chunk = await reader.read(signal, inFlight)
      if (chunk === null) return done
      await writeAll(outFd, chunk, signal)
      done += chunk.length
      if (onProgress) onProgress(done)
    }
  } finally {
    await reader.close()
  }
}

module.exports = { sendfile }
