'use strict'

// The server zcopy serve listens with: node:http, node:https (--ssl-cert,
// --ssl-key) or node:http2's secure server with HTTP/1.1 for older clients
// (--http2). A certificate, key or passphrase that TLS refuses is a usage error.
// Every one is protected (zcopy.protectServer) with --timeout: idle and head
// timeouts, and on TLS an HTTP/1 parser that respects its pause; a TLS
// handshake gets the same time. HTTP/2 has nginx's bounds: at most
// MAX_STREAMS streams open per session (Node's default is 2^32 - 1), and a
// session whose bodies do not move for --timeout is destroyed, whatever
// frames its client keeps sending (http2-send-timeout.js).

const http = require('node:http')
const http2 = require('node:http2')
const https = require('node:https')
const { UsageError } = require('../../../tools/usage-error')
const { closeStalledSessions } = require('./http2-send-timeout')

// nginx's http2_max_concurrent_streams: a client asking for more gets
// REFUSED_STREAM for each stream beyond.
const MAX_STREAMS = 128

function createServer ({ tls, http2: useHttp2, timeout }, handle, protectServer) {
  const server = listenerFor({ tls, http2: useHttp2, timeout }, handle)
  if (useHttp2 && timeout > 0) closeStalledSessions(server, Math.round(timeout * 1000))
  return protectServer(server, { timeout: Math.round(timeout * 1000) })
}

function listenerFor ({ tls, http2: useHttp2, timeout }, handle) {
  if (tls === null) return http.createServer(handle)
  const secure = timeout > 0 ? { ...tls, handshakeTimeout: Math.round(timeout * 1000) } : tls
  try {
    return useHttp2
      ? http2.createSecureServer({ ...secure, allowHTTP1: true, settings: { maxConcurrentStreams: MAX_STREAMS } }, handle)
      : https.createServer(secure, handle)
  } catch (err) {
    const flags = tls.passphrase === undefined ? '--ssl-cert/--ssl-key' : '--ssl-cert/--ssl-key/--ssl-pass'
    throw new UsageError(`${flags}: ${err.message.split('\n')[0]}`)
  }
}

module.exports = { createServer }
