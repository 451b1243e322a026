'use strict'

// The body of a compression thread (see ./background.js): it lowers its own
// scheduling priority to nice 19 (Linux: setpriority on its thread id, read from
// /proc/thread-self), then compresses what it is sent with zlib's synchronous
// API, one job at a time. At nice 19 it gets the CPU the server's own threads
// leave idle: on a busy machine a burst of new files is compressed more slowly
// instead of taking a core from the requests.

const fs = require('node:fs')
const os = require('node:os')
const { parentPort } = require('node:worker_threads')
const zlib = require('node:zlib')
const { brotliParams } = require('./encoders')

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

parentPort.postMessage({ ready: true, lowered: lowerPriority() })
parentPort.on('message', ({ id, encoding, bytes }) => {
  try {
    const out = COMPRESS[encoding](Buffer.from(bytes))
    const copy = out.buffer.slice(out.byteOffset, out.byteOffset + out.length)
    parentPort.postMessage({ id, out: copy }, [copy])
  } catch (err) {
    parentPort.postMessage({ id, error: { message: err.message, code: err.code } })
  }
})
