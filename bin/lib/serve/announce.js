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
// listening on every interface.
function announceListening (say, { root, address, zcopy, config, workers = null }) {
  const { local, network } = urlsOf(address, { tls: config.tls !== null })
  const note = zeroCopyNote(zcopy, config) + (config.http2 ? ', HTTP/2' : '') +
    (workers ? `, ${workers.length} workers` : '')
  say(`zcopy serving ${root} at ${local} (${note}); Ctrl-C to stop`, {
    root, url: local, network, zeroCopy: config.tls === null && zcopy.zeroCopyAvailable, http2: config.http2, workers
  })
  if (config.log !== 'json') for (const url of network) say(`  on your network: ${url}`)
  if (config.log !== 'json' && workers) say(`  workers: ${workers.join(' ')}`)
  if (config.compress) announceCompression(say)
  return local
}

// Once, at start: text files are compressed, into which folder (--no-compress).
function announceCompression (say) {
  const { COMPRESSION_ENCODINGS, defaultCacheDir } = require('../../../lib/http')
  const cacheDir = defaultCacheDir()
  say(`  compressing text files once each (${COMPRESSION_ENCODINGS.join(', ')}), in the background; larger results kept in ${cacheDir} (--no-compress: off)`, {
    compress: { encodings: COMPRESSION_ENCODINGS, cacheDir }
  })
}

module.exports = { announceListening, createSay }
