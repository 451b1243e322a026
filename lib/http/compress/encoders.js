'use strict'

// The codings zcopy compresses into, each with the level it uses. They run in
// the compression processes and threads (./process.js, ./worker.js), with
// zlib's synchronous API; never on libuv's pool.
//
// Levels: the best ratio that is affordable once per file (the sizes and the
// CPU per MiB of each level are in docs/internals.md, "Compressed variants in
// detail"). A variant is made once and sent thousands of times, so brotli 11
// for files up to 1 MiB (about a second of one thread at most); above that
// brotli 9, so that the 8 MiB cap costs about as much. gzip 9 and zstd 19
// everywhere.
// `cheap`: a file whose variant was evicted (the cache holds less than is
// asked for, so it may be made again and again) is made at CHEAP levels:
// brotli 5, gzip 6, zstd 3 (a 16 KiB page: brotli 5 0.66 ms of CPU, 11
// 26.5 ms, for 14 % more bytes).
//
// Deterministic: the parameters depend only on the coding, the file's size and
// `cheap`, and gzip's header carries no time or name (zlib writes mtime 0), so
// the same file gives the same bytes with the same zlib (the Node line)
// everywhere.

const zlib = require('node:zlib')

const BROTLI_BEST_UP_TO = 1024 * 1024
const CHEAP = Object.freeze({ br: 5, gzip: 6, zstd: 3 })

function brotliParams (size, cheap = false) {
  const { constants } = zlib
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: cheap ? CHEAP.br : size <= BROTLI_BEST_UP_TO ? 11 : 9,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: size
    }
  }
}

const zstdParams = (cheap) => ({
  params: { [zlib.constants.ZSTD_c_compressionLevel]: cheap ? CHEAP.zstd : 19, [zlib.constants.ZSTD_c_checksumFlag]: 0 }
})

// The encoder of each coding zcopy compresses into, keyed by the coding's name
// in ../representation's table of codings (not required here: this module runs
// in the compression processes and threads, which load nothing more).
const SYNC_ENCODERS = {
  br: (bytes, cheap) => zlib.brotliCompressSync(bytes, brotliParams(bytes.length, cheap)),
  gzip: (bytes, cheap) => zlib.gzipSync(bytes, { level: cheap ? CHEAP.gzip : 9 }),
  zstd: (bytes, cheap) => zlib.zstdCompressSync(bytes, zstdParams(cheap))
}

// The codings there is an encoder for (./options.js orders them as the table does).
const ENCODED = Object.freeze(Object.keys(SYNC_ENCODERS))

// Whether this Node's zlib can make `encoding` (zstd: not every Node has it).
const encodesHere = (encoding) => encoding !== 'zstd' || typeof zlib.zstdCompressSync === 'function'

// → `bytes` compressed into `encoding` (`cheap`: at the CHEAP level), on this thread.
function encodeSync (encoding, bytes, cheap = false) {
  return SYNC_ENCODERS[encoding](bytes, cheap)
}

module.exports = { CHEAP, ENCODED, encodeSync, encodesHere, brotliParams }
