'use strict'

// The body of a compression thread (see ./background.js). It lowers its own
// scheduling priority as far as it can (Linux: the thread's id from
// /proc/thread-self; SCHED_IDLE with util-linux's `chrt` where that is
// installed, else nice 19 with setpriority), then, one job at a time:
// - reads the source itself, with pread on the descriptor it is given (the
//   open-file cache's, held open by the caller until the answer), fstat's it
//   again after the read, and compresses it; or compresses the bytes it is sent;
// - with zlib's synchronous API.
// At SCHED_IDLE it runs only on a CPU nothing else wants, and a request's thread
// that wakes takes the CPU from it at once (at nice 19 it still has a share, and
// may finish its time slice first: milliseconds of a request's latency on a
// 2-core machine). Reading here keeps the sources off libuv's pool (the
// transfers', fs's and dns.lookup's threads) and off the event loop.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const { parentPort } = require('node:worker_threads')
const zlib = require('node:zlib')
const { brotliParams } = require('./encoders')

const READ_CHUNK = 1024 * 1024

// → 'idle', 'nice' or 'none': what lowering the thread's priority achieved.
function lowerPriority () {
  let tid
  try {
    tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    os.setPriority(tid, 19)
  } catch {
    return 'none' // no procfs, or not Linux: the thread keeps the process's priority
  }
  try {
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 2000 })
    return 'idle'
  } catch {
    return 'nice' // no chrt (or refused): nice 19 stays
  }
}

const COMPRESS = {
  br: (bytes) => zlib.brotliCompressSync(bytes, brotliParams(bytes.length)),
  gzip: (bytes) => zlib.gzipSync(bytes, { level: 9 }),
  zstd: (bytes) => zlib.zstdCompressSync(bytes, {
    params: { [zlib.constants.ZSTD_c_compressionLevel]: 19, [zlib.constants.ZSTD_c_checksumFlag]: 0 }
  })
}

// → the `size` bytes of the file open as `fd` and its fstat after the read
// (what identifies its version), or null when it had fewer bytes.
function readSource (fd, size) {
  const bytes = Buffer.allocUnsafe(size)
  let read = 0
  while (read < size) {
    const n = fs.readSync(fd, bytes, read, Math.min(size - read, READ_CHUNK), read)
    if (n === 0) return null
    read += n
  }
  const { dev, ino, size: now, mtimeMs, ctimeMs } = fs.fstatSync(fd)
  return { bytes, stat: { dev, ino, size: now, mtimeMs, ctimeMs } }
}

parentPort.postMessage({ ready: true, priority: lowerPriority() })
parentPort.on('message', ({ id, encoding, bytes, fd, size }) => {
  try {
    let stat = null
    if (fd !== undefined) {
      const source = readSource(fd, size)
      if (source === null) return parentPort.postMessage({ id, short: true })
      bytes = source.bytes
      stat = source.stat
    }
    const out = COMPRESS[encoding](Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes))
    const copy = out.buffer.slice(out.byteOffset, out.byteOffset + out.length)
    parentPort.postMessage({ id, out: copy, stat }, [copy])
  } catch (err) {
    parentPort.postMessage({ id, error: { message: err.message, code: err.code } })
  }
})
