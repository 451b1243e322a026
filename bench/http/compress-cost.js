'use strict'

// The hidden cost of `compress`: CPU milliseconds per MiB of source for each
// coding and level zcopy could use, and the sizes they give, on the 212 KiB
// bundle (bundle.js) and on a 2 MiB one (brotli 9 above 1 MiB). zlib's
// synchronous API on this thread, so that process.cpuUsage() is the cost; the
// store runs the same work on a pool thread. Median of 5.
//
//   node bench/http/compress-cost.js

const zlib = require('node:zlib')
const { makeBundle } = require('./bundle')
const { brotliParams } = require('../../lib/http')

function brotli (quality) {
  return (bytes) => zlib.brotliCompressSync(bytes, { params: { ...brotliParams(bytes.length).params, [zlib.constants.BROTLI_PARAM_QUALITY]: quality } })
}

const CODINGS = [
  ['br 11 (zcopy, up to 1 MiB)', brotli(11)],
  ['br 9 (zcopy, above 1 MiB)', brotli(9)],
  ['br 5', brotli(5)],
  ['br 4 (compression()\'s default)', brotli(4)],
  ['gzip 9 (zcopy)', (bytes) => zlib.gzipSync(bytes, { level: 9 })],
  ['gzip 6 (nginx gzip_comp_level 6, compression())', (bytes) => zlib.gzipSync(bytes, { level: 6 })]
]
if (typeof zlib.zstdCompressSync === 'function') {
  CODINGS.push(['zstd 19 (zcopy)', (bytes) => zlib.zstdCompressSync(bytes, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 19 } })])
  CODINGS.push(['zstd 3', (bytes) => zlib.zstdCompressSync(bytes, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } })])
}

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

console.log(`# ${new Date().toISOString()} Node ${process.version}${typeof zlib.zstdCompressSync === 'function' ? '' : ' (no zstd in this zlib)'}`)
console.log('| coding | source | compressed | CPU ms | CPU ms per MiB |')
console.log('|---|---:|---:|---:|---:|')
for (const size of [212 * 1024, 2 * 1024 * 1024]) {
  const source = makeBundle(size)
  for (const [name, compress] of CODINGS) {
    if (size > 1024 * 1024 && name.startsWith('br 11')) continue
    let out
    const times = []
    for (let i = 0; i < 5; i++) {
      const before = process.cpuUsage()
      out = compress(source)
      const used = process.cpuUsage(before)
      times.push((used.user + used.system) / 1000)
    }
    const ms = median(times)
    console.log(`| ${name} | ${source.length} | ${out.length} | ${ms.toFixed(1)} | ${(ms / (source.length / 1048576)).toFixed(0)} |`)
  }
}
