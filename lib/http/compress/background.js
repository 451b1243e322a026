'use strict'

// Where compressed variants are made: on threads of their own at the lowest
// scheduling priority (./worker.js: SCHED_IDLE, else nice 19), which read the
// sources themselves (compressFile()), shared by every store in the process, at
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
      job.resolve(message)
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

// → a free thread, busy from now on, or null (none can start, or all are busy).
// `concurrency`: the caller's bound on jobs at once, which raises the number of
// threads (up to 8).
function takeThread (concurrency) {
  limit = Math.min(MAX_THREADS, Math.max(limit, concurrency))
  const thread = unavailable ? null : freeThread()
  if (thread === null) return null
  thread.busy = true
  thread.worker.ref() // a job under way keeps the process alive, as a pool job would
  return thread
}

function post (thread, message, transfer) {
  const id = ++nextId
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, thread })
    thread.worker.postMessage({ id, ...message }, transfer)
  })
}

// → Promise<Buffer> of `bytes` (not used by the caller afterwards: its memory is
// handed to the thread) compressed into `encoding`.
function compress (encoding, bytes, concurrency = 1) {
  const thread = takeThread(concurrency)
  if (thread === null) return encode(encoding, bytes)
  // A Buffer of its own ArrayBuffer (any above 4 KiB) is handed over as it is.
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
  const memory = whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)
  return post(thread, { encoding, bytes: memory }, [memory]).then((message) => Buffer.from(message.out))
}

// The file open as `fd` (held open by the caller until this settles), `size`
// bytes, read and compressed into `encoding` by a compression thread: → null
// at once when no thread is free (read it and use compress()), else a Promise
// of { out: Buffer, stat: { dev, ino, size, mtimeMs, ctimeMs } (fstat after
// the read) }, or of null when the file had fewer bytes than `size`.
function compressFile (encoding, fd, size, concurrency = 1) {
  const thread = takeThread(concurrency)
  if (thread === null) return null
  return post(thread, { encoding, fd, size }).then((message) => message.short ? null : { out: Buffer.from(message.out), stat: message.stat })
}

module.exports = { compress, compressFile }
