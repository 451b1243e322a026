'use strict'

// Reading a non-regular source (a FIFO, a pipe, a character device) without
// ever parking a thread-pool thread. A read(2) of a FIFO whose writer is silent
// waits for ever; on the pool it holds a thread that an abort cannot free, and
// Node joins the pool at exit, so the process could not exit either.
//
// The source's open file description is opened again through /proc/self/fd
// with O_NONBLOCK: a description of our own, so the caller's descriptor and its
// flags stay as they are. A FIFO or a pipe is then read on readiness by a libuv
// pipe handle on the event loop (net.Socket), as Node's own pipe streams are; a
// character device by non-blocking reads, EAGAIN waited out with timers. Where
// no such reopening exists (a socket given as a source: ENXIO), the caller's
// descriptor is read as it is (Node's sockets are non-blocking already).
//
// openReader(fd) → Promise of { read(signal, inFlight) → Promise<Buffer | null>
// (null at the end), close() }. `inFlight.read`, when given, is set to a read
// still queued on the pool (see fallback.js): a reader never leaves one behind
// but on the caller's own descriptor.

const fs = require('node:fs')
const net = require('node:net')
const { promisify } = require('node:util')
const { backoff, nextDelay } = require('./backoff')
const { abortError } = require('./errors')

const open = promisify(fs.open)
const read = promisify(fs.read)
const fstat = promisify(fs.fstat)

const CHUNK_SIZE = 256 * 1024
const REOPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_CLOEXEC

const noop = () => {}

// Resolves as `promise` does, or rejects with an AbortError as soon as `signal`
// aborts.
function unlessAborted (promise, signal) {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(abortError(signal))
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

// A FIFO or a pipe, on the event loop: chunks as the libuv pipe handle reads them.
function pipeReader (fd) {
  const socket = new net.Socket({ fd, readable: true, writable: false })
  const chunks = socket[Symbol.asyncIterator]()
  return {
    async read (signal) {
      const { value, done } = await unlessAborted(chunks.next(), signal)
      return done ? null : value
    },
    close () {
      socket.destroy() // closes our descriptor
      return Promise.resolve()
    }
  }
}

// Non-blocking reads of `fd` on the pool, EAGAIN waited out with timers; `close`
// is what releases the descriptor (nothing for the caller's own).
function descriptorReader (fd, close) {
  return {
    async read (signal, inFlight = null) {
      let delay = 1
      for (;;) {
        if (signal && signal.aborted) throw abortError(signal)
        try {
          const reading = read(fd, Buffer.allocUnsafe(CHUNK_SIZE), 0, CHUNK_SIZE, null)
          if (inFlight) inFlight.read = reading.then(noop, noop)
          const { bytesRead, buffer } = await unlessAborted(reading, signal)
          return bytesRead === 0 ? null : buffer.subarray(0, bytesRead)
        } catch (err) {
          if (err.code !== 'EAGAIN') throw err
          await backoff(delay, signal)
          delay = nextDelay(delay)
        }
      }
    },
    close
  }
}

async function openReader (fd) {
  let own
  try {
    own = await open(`/proc/self/fd/${fd}`, REOPEN_FLAGS)
  } catch {
    return descriptorReader(fd, () => Promise.resolve())
  }
  let stats
  try {
    stats = await fstat(own)
  } catch (err) {
    fs.close(own, noop)
    throw err
  }
  if (stats.isFIFO()) return pipeReader(own)
  return descriptorReader(own, () => promisify(fs.close)(own))
}

module.exports = { openReader }
