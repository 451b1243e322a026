'use strict'

// Pure-JS sendfile with the native contract: read a range into a buffer, write it
// out, repeat. Used when the addon is not loaded. It writes to the caller's fd
// number itself (no private dup), and waits out EAGAIN with short timers.

const fs = require('node:fs')
const { promisify } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { abortError, truncatedError } = require('./errors')

const read = promisify(fs.read)
const write = promisify(fs.write)

const BUFFER_SIZE = 256 * 1024
const MAX_BACKOFF_MS = 64

async function writeAll (fd, buffer, signal, onWritten) {
  let written = 0
  let backoff = 1
  while (written < buffer.length) {
    try {
      const { bytesWritten } = await write(fd, buffer, written, buffer.length - written, null)
      written += bytesWritten
      if (onWritten) onWritten(written)
      backoff = 1
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
      await sleep(backoff, undefined, { signal }).catch(() => { throw abortError(signal) })
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
    }
  }
}

// `head`: bytes written before the file's; `onHeadWritten(bytes)` follows them.
async function sendfile (outFd, inFd, offset, length, { signal, onProgress, head, onHeadWritten } = {}) {
  if (head) await writeAll(outFd, head, signal, onHeadWritten)
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(BUFFER_SIZE, length)))
  let done = 0
  while (done < length) {
    if (signal && signal.aborted) throw abortError(signal)
    const { bytesRead } = await read(inFd, buffer, 0, Math.min(buffer.length, length - done), offset + done)
    if (bytesRead === 0) throw truncatedError(offset + done, length - done)
    await writeAll(outFd, buffer.subarray(0, bytesRead), signal)
    done += bytesRead
    if (onProgress) onProgress(done)
  }
  return done
}

module.exports = { sendfile }
