'use strict'

// Where compressed variants are made, never on the event loop and never on
// libuv's thread pool (whose threads the file transfers, fs, dns.lookup and
// zlib's async API share), at most as many at once as the largest
// `concurrency` a store asked for (8 at most), shared by every store; a job
// that finds them all busy waits its turn in `waiting` (first come, first
// served; each store has at most `concurrency` jobs out, so it holds at most
// the sum of the stores' `concurrency`):
// - on Linux, in compression processes (./process.js): children of the
//   server, which read the source themselves through /proc/PID/fd
//   (compressFile()), in Linux's SCHED_IDLE class (with the addon; nice 19
//   without): any other thread that wakes on their CPU takes it from them at
//   once, so they run on the CPU time the server and its neighbours leave. On
//   a machine so busy that a job has waited AGED_MS (as long as a burst is
//   held back: PATIENCE_MS, 10 s), that process is stopped and its job, and the
//   jobs of the next HURRIED_MS, go to processes at nice 10 (about a tenth of
//   a busy thread's share), so that variants are still made; free processes
//   of the other kind are let go as the mode changes;
// - elsewhere, or where a process cannot start or cannot reach the
//   descriptor, on threads of the server's own that lower their priority
//   (./worker.js), which read the source themselves too;
// - where neither can start (a sandbox that forbids it), nowhere: the file is
//   sent as it is (compressFile() → null).
// Idle ones do not keep the server alive. A process goes with the server: a
// free one as its channel closes; when the server exits (process.exit() too),
// any still listed is killed; a server killed runs no code, and its busy
// process exits, silently, at the end of its job.

const { fork } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { PATIENCE_MS, niceFor } = require('./priority')

const MAX_THREADS = 8
const threads = [] // { worker, busy }
const processes = [] // { worker: { postMessage, ref, unref }, busy, child, idle, since, timer, message }
// Not sooner: on a CPU the requests keep busy, the process at nice 10 takes a
// tenth of it from them (docs/benchmarks-log.md, "A saturated CPU: hurried
// after 10 s, not 2"), while the file itself goes out meanwhile.
const AGED_MS = PATIENCE_MS
const HURRIED_MS = 10_000
let hurriedUntil = 0 // processes started before this moment are not SCHED_IDLE
let limit = 1
let nextId = 0
const pending = new Map() // id → { resolve, reject, thread }
const waiting = [] // resolve() of the jobs waiting for a process or thread, oldest first
let unavailable = false
// ZCOPY_COMPRESS_PROCESS=0: threads only (to compare, or where a child
// process is not wanted).
let processesUnavailable = process.platform !== 'linux' || process.env.ZCOPY_COMPRESS_PROCESS === '0'

// Settles the job a thread's or a process's `message` answers.
function answered (thread, message) {
  if (message.ready) return
  const job = pending.get(message.id)
  if (job === undefined) return
  pending.delete(message.id)
  thread.busy = false
  idle(thread)
  setImmediate(dispatch) // after a process's own handler, which may retire it
  if (message.error) {
    const err = new Error(message.error.message)
    if (message.error.code) err.code = message.error.code
    job.reject(err)
  } else {
    job.resolve(message)
  }
}

// `thread` is no longer one of `list`'s.
function leave (list, thread) {
  const at = list.indexOf(thread)
  if (at !== -1) list.splice(at, 1)
}

// `thread` (in `list`) stopped: its job fails.
function stopped (list, thread, err) {
  leave(list, thread)
  for (const [id, job] of pending) {
    if (job.thread !== thread) continue
    pending.delete(id)
    job.reject(err || new Error('the compression thread stopped'))
  }
  dispatch() // its place is free: a waiting job may start one
}

function startThread () {
  const worker = new Worker(path.join(__dirname, 'worker.js'))
  const thread = { worker, busy: false }
  worker.unref()
  worker.on('message', (message) => answered(thread, message))
  worker.on('error', (err) => stopped(threads, thread, err))
  worker.on('exit', () => stopped(threads, thread, null))
  threads.push(thread)
  return thread
}

// When the server exits (process.exit() too), its processes are killed (the
// handler is added with the first one): a busy one would otherwise finish a job
// nobody will take, after the server is gone (only a free one sees its channel
// close at once). kill() is synchronous, so it can run in 'exit'.
let killedOnExit = false

function startProcess () {
  if (!killedOnExit) {
    killedOnExit = true
    process.on('exit', () => {
      for (const thread of processes) thread.child.kill('SIGKILL')
    })
  }
  const idle = Date.now() >= hurriedUntil
  const child = fork(path.join(__dirname, 'process.js'), idle ? ['--idle'] : [], {
    execArgv: [],
    serialization: 'advanced', // Buffers as they are
    stdio: ['ignore', 'ignore', 'inherit', 'ipc']
  })
  // Lowered at once, from here: the child's own start (Node's bootstrap, some
  // tens of ms of CPU) would otherwise run at the server's priority, beside
  // the requests, until it lowers itself. (No pid: it did not start, and
  // setPriority(undefined) would lower the server itself.)
  if (child.pid !== undefined) {
    try { os.setPriority(child.pid, niceFor(idle)) } catch {}
  }
  child.unref()
  child.channel.unref()
  const thread = {
    worker: {
      postMessage: (message) => {
        thread.since = Date.now()
        thread.message = message
        child.send(message)
        if (thread.idle && thread.timer === null) {
          thread.timer = setTimeout(() => age(thread), AGED_MS)
          thread.timer.unref()
        }
      },
      ref: () => child.channel && child.channel.ref(),
      unref: () => child.channel && child.channel.unref()
    },
    busy: false,
    child,
    idle,
    since: 0,
    timer: null,
    message: null
  }
  child.on('message', (message) => {
    answered(thread, message)
    if (thread.busy) return
    thread.message = null
    if (thread.timer !== null) {
      clearTimeout(thread.timer)
      thread.timer = null
    }
    if (thread.idle !== (Date.now() >= hurriedUntil)) retire(thread) // of the other mode: the next job starts one of the right kind
  })
  child.on('error', (err) => {
    processesUnavailable = true // could not start (a sandbox, no processes left)
    stopped(processes, thread, err)
  })
  child.on('exit', () => stopped(processes, thread, new Error('the compression process stopped')))
  processes.push(thread)
  return thread
}

// `thread`'s process, free, leaves the list and exits (its channel closed).
function retire (thread) {
  leave(processes, thread)
  if (thread.child.connected) thread.child.disconnect()
}

// A job of an idle-class process has waited AGED_MS (the machine is that busy):
// hurried mode; the process is killed, and its job goes to one at nice 10.
function age (thread) {
  thread.timer = null
  if (!thread.busy) return
  const waited = Date.now() - thread.since
  if (waited < AGED_MS) {
    thread.timer = setTimeout(() => age(thread), AGED_MS - waited)
    thread.timer.unref()
    return
  }
  hurriedUntil = Date.now() + HURRIED_MS
  const { message } = thread
  leave(processes, thread)
  thread.child.removeAllListeners('exit')
  thread.child.on('exit', () => {}) // its job is not lost: it moves below
  thread.child.kill('SIGKILL')
  const job = pending.get(message.id)
  let next = null
  try {
    next = startProcess()
  } catch {}
  if (job === undefined) return
  if (next === null) {
    pending.delete(message.id)
    job.reject(new Error('the compression process stopped'))
    return
  }
  next.busy = true
  next.worker.ref()
  job.thread = next
  next.worker.postMessage(message)
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

function freeProcess () {
  const free = processes.find((thread) => !thread.busy)
  if (free !== undefined) return free
  if (processes.length >= limit) return null
  try {
    return startProcess()
  } catch {
    processesUnavailable = true
    return null
  }
}

// → a free process (or, where none can run, thread), busy from now on; null
// when all are busy (or none can start).
function takeFree () {
  const thread = !processesUnavailable ? freeProcess() : unavailable ? null : freeThread()
  if (thread === null) return null
  thread.busy = true
  thread.worker.ref() // a job under way keeps the process alive, as a pool job would
  return thread
}

// → Promise of a process or thread, busy from now on, for one job: at once when
// one is free, else once one is (waiting's turn); null when none can start.
// `concurrency`: the caller's bound on jobs at once, which raises the number
// of processes or threads (up to 8).
function acquire (concurrency) {
  limit = Math.min(MAX_THREADS, Math.max(limit, concurrency))
  const thread = waiting.length === 0 ? takeFree() : null // none jumps the queue
  if (thread !== null || (processesUnavailable && unavailable)) return Promise.resolve(thread)
  return new Promise((resolve) => waiting.push(resolve))
}

// Hands free processes or threads to the jobs waiting, oldest first.
function dispatch () {
  while (waiting.length > 0) {
    const thread = takeFree()
    if (thread === null && !(processesUnavailable && unavailable)) return
    waiting.shift()(thread)
  }
}

function post (thread, message) {
  const id = ++nextId
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, thread })
    thread.worker.postMessage({ id, ...message })
  })
}

// The file open as `fd` (held open by the caller until this settles), `size`
// bytes, read and compressed into `encoding` (`cheap`: at the cheaper level,
// ./encoders.js) by a compression process or thread, once one is free: →
// Promise of { out: Buffer, stat: { dev, ino, size, mtimeMs, ctimeMs } (fstat
// after the read), cpuMs (what it cost: CPU time in a process, time on the
// thread in a thread) }, of null when the file had fewer bytes than `size`;
// rejected with code ENOCOMPRESSOR where no process or thread can start.
async function compressFile (encoding, fd, size, concurrency = 1, cheap = false) {
  const thread = await acquire(concurrency)
  if (thread === null) throw Object.assign(new Error('no compression process or thread can start'), { code: 'ENOCOMPRESSOR' })
  const viaProcess = processes.includes(thread)
  try {
    return fileMade(await post(thread, viaProcess ? { encoding, cheap, pid: process.pid, fd, size } : { encoding, cheap, fd, size }))
  } catch (err) {
    // Not reached through /proc (hidepid, another user, no procfs), or the
    // process stopped: threads from now on.
    if (viaProcess && (err.code === 'EACCES' || err.code === 'ENOENT' || err.code === 'EPERM' || /compression process/.test(err.message))) {
      processesUnavailable = true
      dispatch()
      return compressFile(encoding, fd, size, concurrency, cheap)
    }
    throw err
  }
}

function fileMade (message) {
  if (message.short) return null
  const { out } = message // an ArrayBuffer from a thread, a Uint8Array from a process
  return {
    out: out instanceof ArrayBuffer ? Buffer.from(out) : Buffer.from(out.buffer, out.byteOffset, out.byteLength),
    stat: message.stat,
    cpuMs: message.cpuMs
  }
}

module.exports = { compressFile }
