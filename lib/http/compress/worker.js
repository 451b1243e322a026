'use strict'

// The body of a compression thread (see ./background.js: where no compression
// process can run). It lowers its own scheduling priority to nice 19 (Linux:
// setpriority on its thread id, read from /proc/thread-self), then, one job at
// a time:
// - reads the source itself, with pread on the descriptor it is given (the
//   open-file cache's, held open by the caller until the answer), fstat's it
//   again after the read, and compresses it (`cheap`: at the cheaper level);
// - with zlib's synchronous API, and answers with the time that took (cpuMs:
//   wall time on this thread, an upper bound of its CPU time, which Node 20
//   cannot read per thread).
// Reading here keeps the sources off libuv's pool (the transfers', fs's and
// dns.lookup's threads) and off the event loop. (On Linux a compression
// process, ./process.js, is used first: its every thread is in SCHED_IDLE.)

const fs = require('node:fs')
const os = require('node:os')
const { parentPort } = require('node:worker_threads')
const { encodeSync } = require('./encoders')
const { readSource } = require('./read-source')
const { IDLE_NICE } = require('./priority')

function lowerPriority () {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    os.setPriority(tid, IDLE_NICE)
    return true
  } catch {
    return false // no procfs, or not Linux: the thread keeps the process's priority
  }
}

parentPort.postMessage({ ready: true, lowered: lowerPriority() })
parentPort.on('message', ({ id, encoding, cheap, fd, size }) => {
  try {
    const started = performance.now()
    const source = readSource(fd, size)
    if (source === null) return parentPort.postMessage({ id, short: true })
    const out = encodeSync(encoding, source.bytes, cheap)
    const copy = out.buffer.slice(out.byteOffset, out.byteOffset + out.length)
    parentPort.postMessage({ id, out: copy, stat: source.stat, cpuMs: performance.now() - started }, [copy])
  } catch (err) {
    parentPort.postMessage({ id, error: { message: err.message, code: err.code } })
  }
})
