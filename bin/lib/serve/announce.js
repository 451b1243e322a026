'use strict'

// What zcopy serve says about itself on stdout (the access log goes there
// too): plain lines, or with --log json one object per line.

const { urlsOf } = require('./urls')

function createSay (config, write) {
  return (message, fields = {}) => {
    if (config.log === 'json') write(JSON.stringify({ time: new Date().toISOString(), msg: message.replace(/^zcopy: /, ''), ...fields }))
    else write(message)
  }
}

function zeroCopyNote (zcopy, config) {
  if (config.tls !== null) return 'zero-copy off: TLS is encrypted in user space, stream fallback'
  return zcopy.zeroCopyAvailable ? 'zero-copy on' : 'zero-copy off: stream fallback'
}

// The start banner: the URL, whether sendfile is used, the LAN URLs when
// listening on every interface; with compression, where the variants go:
// `variantsFolders`, what each serving process's store did with its folder
// (app.js, variantsFolder(); one per worker).
function announceListening (say, { root, address, zcopy, config, workers = null, variantsFolders = [] }) {
  const { local, network } = urlsOf(address, { tls: config.tls !== null })
  const note = zeroCopyNote(zcopy, config) + (config.http2 ? ', HTTP/2' : '') + (config.nativeLane ? ', native lane' : '') +
    (workers ? `, ${workers.length} workers` : '')
  say(`zcopy serving ${root} at ${local} (${note}); Ctrl-C to stop`, {
    root, url: local, network, zeroCopy: config.tls === null && zcopy.zeroCopyAvailable, http2: config.http2, nativeLane: config.nativeLane === true, workers
  })
  if (config.log !== 'json') for (const url of network) say(`  on your network: ${url}`)
  if (config.log !== 'json' && workers) say(`  workers: ${workers.join(' ')}`)
  if (config.compress) announceCompression(say, variantsFolders)
  return local
}

// What the first request of a file gets, said so that it reads as no bug (the
// access log marks those answers `identity (variant pending)`).
const FIRST_REQUEST = 'the first request of a file gets it uncompressed while its variant is made'

// Once, at start: text files are compressed, into which folder (--no-compress).
// `folders`: the folder each store actually uses, which is not the default one
// when that is another user's (a fresh one is made then), or none (variants
// then stay in memory: only those of up to 64 KiB are made).
function announceCompression (say, folders) {
  const { COMPRESSION_ENCODINGS, defaultCacheDir } = require('../../../lib/http')
  const configured = defaultCacheDir()
  const bases = [...new Set(folders.filter((folder) => folder.made === true).map((folder) => folder.base))]
  const none = folders.filter((folder) => folder.made === false).length
  let where
  if (bases.length > 0) {
    where = `larger results kept in ${bases.join(', ')}`
    if (none > 0) where += ` (in memory only for ${none} of ${folders.length} workers: no folder could be made)`
  } else {
    where = `results kept in memory only, up to 64 KiB each: no folder could be made in ${configured}, larger files are sent as they are`
  }
  say(`  compressing text files once each (${COMPRESSION_ENCODINGS.join(', ')}), in the background (${FIRST_REQUEST}); ${where} (--no-compress: off)`, {
    compress: { encodings: COMPRESSION_ENCODINGS, cacheDir: bases.length > 0 ? bases[0] : null, ...(bases.length > 1 ? { cacheDirs: bases } : {}), memoryOnly: bases.length === 0 && none > 0 }
  })
}

module.exports = { announceListening, createSay }
