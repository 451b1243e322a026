'use strict'

// The server zcopy serve listens with: node:http, node:https (--ssl-cert,
// --ssl-key) or node:http2's secure server with HTTP/1.1 for older clients
// (--http2). A certificate, key or passphrase that TLS refuses is a usage error.
// Every one is protected (zcopy.protectServer) with --timeout: idle and head
// timeouts, and on TLS an HTTP/1 parser that respects its pause; a TLS
// handshake gets the same time.

const http = require('node:http')
const http2 = require('node:http2')
const https = require('node:https')
const { UsageError } = require('../../../tools/usage-error')

function createServer ({ tls, http2: useHttp2, timeout }, handle, protectServer) {
  return protectServer(listenerFor({ tls, http2: useHttp2, timeout }, handle), { timeout: Math.round(timeout * 1000) })
}

function listenerFor ({ tls, http2: useHttp2, timeout }, handle) {
  if (tls === null) return http.createServer(handle)
  const secure = timeout > 0 ? { ...tls, handshakeTimeout: Math.round(timeout * 1000) } : tls
  try {
    return useHttp2
      ? http2.createSecureServer({ ...secure, allowHTTP1: true }, handle)
      : https.createServer(secure, handle)
  } catch (err) {
    const flags = tls.passphrase === undefined ? '--ssl-cert/--ssl-key' : '--ssl-cert/--ssl-key/--ssl-pass'
    throw new UsageError(`${flags}: ${err.message.split('\n')[0]}`)
  }
}

module.exports = { createServer }
