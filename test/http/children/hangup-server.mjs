// A server under attack, in its own process: a crash is seen by the parent as this
// process exiting. argv[2] picks the transport: http, https, compression (node:http
// + compression()), express (Express + compression()), h2c, h2 (TLS). argv[3] is
// the directory to serve. Over IPC it sends { ready, port }, and answers
// { cmd: 'fds' } with { fds } (this process's open descriptors) and
// { cmd: 'close' } with { closed } once the middleware's close() resolved.

import { readdirSync } from 'node:fs'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import compression from 'compression'
import express from 'express'
import zcopy from '../../../lib/index.js'
import { tls } from '../../support/http.mjs'

const [kind, root] = process.argv.slice(2)
const serve = zcopy.serveStatic(root)

function handler (req, res) {
  serve(req, res, (err) => {
    if (err && !(err.status < 500)) console.error(`hangup-server (${kind}):`, err) // the test fails on the status
    if (res.headersSent) return res.destroy()
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  })
}

function withCompression () {
  const compress = compression({ threshold: 0 })
  return (req, res) => compress(req, res, () => handler(req, res))
}

const servers = {
  http: () => http.createServer(handler),
  https: () => https.createServer(tls, handler),
  compression: () => http.createServer(withCompression()),
  express: () => http.createServer(express().use(compression({ threshold: 0 }), serve)),
  h2c: () => http2.createServer(handler),
  h2: () => http2.createSecureServer(tls, handler)
}

const server = servers[kind]()
// Sessions and sockets the clients cut: their errors are theirs, not the server's.
server.on('sessionError', () => {})
server.listen(0, '127.0.0.1', () => {
  process.send({ ready: true, port: server.address().port })
})

process.on('message', (message) => {
  if (message.cmd === 'fds') {
    process.send({ fds: readdirSync('/proc/self/fd').length })
  } else if (message.cmd === 'close') {
    server.close()
    if (server.closeAllConnections) server.closeAllConnections()
    serve.close().then(() => process.send({ closed: true }))
  }
})
