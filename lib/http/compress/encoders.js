'use strict'

// The codings zcopy compresses into, each with the level it uses. They run on
// the compression threads (./worker.js, ./background.js); encode() here, zlib's
// asynchronous API on libuv's pool, is the fallback where no thread can start.
//
// Levels: the best ratio that is affordable once per file (the sizes and the
// CPU per MiB of each level are in docs/http.md, "Compressed variants"). A
// variant is made once and sent thousands of times, so brotli 11 for files up
// to 1 MiB (about a second of one thread at most); above that brotli 9, so that
// the 8 MiB cap costs about as much. gzip 9 and zstd 19 everywhere.
//
// Deterministic: the parameters depend only on the coding and the file's size,
// and gzip's header carries no time or name (zlib writes mtime 0), so the same
// file gives the same bytes with the same zlib (the Node line) everywhere.

const zlib = require('node:zlib')

const BROTLI_BEST_UP_TO = 1024 * 1024

function brotliParams (size) {
  const { constants } = zlib
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: size <= BROTLI_BEST_UP_TO ? 11 : 9,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: size
    }
  }
}

const GZIP = { level: 9 }
const ZSTD = () => ({
  params: { [zlib.constants.ZSTD_c_compressionLevel]: 19, [zlib.constants.ZSTD_c_checksumFlag]: 0 }
})

const ENCODERS = {
  br: (bytes, done) => zlib.brotliCompress(bytes, brotliParams(bytes.length), done),
  gzip: (bytes, done) => zlib.gzip(bytes, GZIP, done)
}
if (typeof zlib.zstdCompress === 'function') {
  ENCODERS.zstd = (bytes, done) => zlib.zstdCompress(bytes, ZSTD(), done)
}

// The same, with zlib's synchronous API (the compression process and threads).
const SYNC_ENCODERS = {
  br: (bytes) => zlib.brotliCompressSync(bytes, brotliParams(bytes.length)),
  gzip: (bytes) => zlib.gzipSync(bytes, GZIP),
  zstd: (bytes) => zlib.zstdCompressSync(bytes, ZSTD())
}

// What this Node can make, in the server's order of preference (br first: the
// smallest; zstd before gzip).
const AVAILABLE = Object.freeze(['br', 'zstd', 'gzip'].filter((encoding) => encoding in ENCODERS))

// → Promise<Buffer> of `bytes` compressed into `encoding`.
function encode (encoding, bytes) {
  return new Promise((resolve, reject) => {
    ENCODERS[encoding](bytes, (err, out) => err ? reject(err) : resolve(out))
  })
}

// → `bytes` compressed into `encoding`, on this thread.
function encodeSync (encoding, bytes) {
  return SYNC_ENCODERS[encoding](bytes)
}

module.exports = { AVAILABLE, encode, encodeSync, brotliParams }
