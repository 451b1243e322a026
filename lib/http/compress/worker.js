'use strict'

// The body of a compression thread (see ./background.js: where no compression
// process can run). It lowers its own scheduling priority to nice 19 (Linux:
// setpriority on its thread id, read from /proc/thread-self), then, one job at
// a time:
// - reads the source itself, with pread on the descriptor it is given (the
//   open-file cache's, held open by the caller until the answer), fstat's it
//   again after the read, and compresses it; or compresses the bytes it is sent;
// - with zlib's synchronous API.
// Reading here keeps the sources off libuv's pool (the transfers', fs's and
// dns.lookup's threads) and off the event loop. (SCHED_IDLE was tried: on a
// loaded machine it delays the server's wake-ups as much as nice 19 does, as
// the thread is charged to the server's autogroup either way; see
// ./process.js.)

const fs = require('node:fs')
const os = require('node:os')
const { parentPort } = require('node:worker_threads')
const zlib = require('node:zlib')
const { brotliParams } = require('./encoders')

const READ_CHUNK = 1024 * 1024

function lowerPriority () {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    os.setPriority(tid, 19)
    return true
  } catch {
    return false // no procfs, or not Linux: the thread keeps the process's priority
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

parentPort.postMessage({ ready: true, lowered: lowerPriority() })
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
