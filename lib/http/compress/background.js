'use strict'

// Where compressed variants are made: on threads of their own at the lowest
// scheduling priority (./worker.js), shared by every store in the process, at
// most as many as the largest `concurrency` a store asked for (8 at most). They
// are never on the event loop and never on libuv's thread pool, whose threads
// the file transfers, fs, dns.lookup and zlib's async API share. Idle threads
// do not keep the process alive. Where a thread cannot be started (a sandbox
// that forbids it), zlib's async API on the pool is used instead.

const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { encode } = require('./encoders')

const MAX_THREADS = 8
const threads = [] // { worker, busy }
let limit = 1
let nextId = 0
const pending = new Map() // id → { resolve, reject, thread }
let unavailable = false

function startThread () {
  const worker = new Worker(path.join(__dirname, 'worker.js'))
  const thread = { worker, busy: false }
  worker.unref()
  worker.on('message', (message) => {
    if (message.ready) return
    const job = pending.get(message.id)
    if (job === undefined) return
    pending.delete(message.id)
    thread.busy = false
    idle(thread)
    if (message.error) {
      const err = new Error(message.error.message)
      if (message.error.code) err.code = message.error.code
      job.reject(err)
    } else {
      job.resolve(Buffer.from(message.out))
    }
  })
  const gone = (err) => {
    const at = threads.indexOf(thread)
    if (at !== -1) threads.splice(at, 1)
    for (const [id, job] of pending) {
      if (job.thread !== thread) continue
      pending.delete(id)
      job.reject(err || new Error('the compression thread stopped'))
    }
  }
  worker.on('error', gone)
  worker.on('exit', () => gone(null))
  threads.push(thread)
  return thread
}

// A thread with nothing to do does not hold the process open.
function idle (thread) {
  if (!thread.busy) thread.worker.unref()
}

function freeThread () {
  const free = threads.find((thread) => !thread.busy)
  if (free !== undefined) return free
  if (threads.length >= limit) return null
  try {
    return startThread()
  } catch {
    unavailable = true
    return null
  }
}

// → Promise<Buffer> of `bytes` (not used by the caller afterwards: its memory is
// handed to the thread) compressed into `encoding`. `concurrency`: the caller's
// bound on jobs at once, which raises the number of threads (up to 8).
function compress (encoding, bytes, concurrency = 1) {
  limit = Math.min(MAX_THREADS, Math.max(limit, concurrency))
  const thread = unavailable ? null : freeThread()
  if (thread === null) return encode(encoding, bytes)
  thread.busy = true
  thread.worker.ref() // a job under way keeps the process alive, as a pool job would
  const id = ++nextId
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, thread })
    thread.worker.postMessage({ id, encoding, bytes: copy }, [copy])
  })
}

module.exports = { compress }
