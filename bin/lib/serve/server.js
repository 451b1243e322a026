'use strict'

// The server zcopy serve listens with: node:http, node:https (--ssl-cert,
// --ssl-key) or node:http2's secure server with HTTP/1.1 for older clients
// (--http2). A certificate, key or passphrase that TLS refuses is a usage error.

const http = require('node:http')
const http2 = require('node:http2')
const https = require('node:https')
const { UsageError } = require('../usage-error')

function createServer ({ tls, http2: useHttp2 }, handle) {
  if (tls === null) return http.createServer(handle)
  try {
    return useHttp2
      ? http2.createSecureServer({ ...tls, allowHTTP1: true }, handle)
      : https.createServer(tls, handle)
  } catch (error) {
    const flags = tls.passphrase === undefined ? '--ssl-cert/--ssl-key' : '--ssl-cert/--ssl-key/--ssl-pass'
    throw new UsageError(`${flags}: ${error.message.split('\n')[0]}`)
  }
}

module.exports = { createServer }
