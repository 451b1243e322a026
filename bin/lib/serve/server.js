'use strict'

// The server zcopy serve listens with: node:http, node:https (--ssl-cert,
// --ssl-key) or node:http2's secure server with HTTP/1.1 for older clients
// (--http2). A certificate or key that TLS refuses is a usage error.

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
    throw new UsageError(`--ssl-cert/--ssl-key: ${error.message.split('\n')[0]}`)
  }
}

module.exports = { createServer }
