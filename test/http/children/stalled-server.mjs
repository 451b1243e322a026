// A TLS server for clients that stop reading (stalled-*.test.mjs, issue 47), in
// its own process so that its memory is its own. argv[2]: https (HTTP/1.1 over
// TLS) or h2 (HTTP/2 over TLS); argv[3]: the directory to serve. Runs with
// --expose-gc. Over IPC it sends { ready, port }, and answers
// { cmd: 'memory' } with { rss, arrayBuffers, heapUsed, fds } after two full
// collections: arrayBuffers counts every Buffer the process holds, the pieces
// read for the clients and the bytes handed to Node and not yet written out
// among them; and { cmd: 'close' } with { closed } once the middleware's close()
// resolved.

import { readdirSync } from 'node:fs'
import http2 from 'node:http2'
import https from 'node:https'
import zcopy from '../../../lib/index.js'
import { tls } from '../../support/http.mjs'

const [kind, root] = process.argv.slice(2)
const serve = zcopy.serveStatic(root)

function handler (req, res) {
  serve(req, res, (err) => {
    if (err && !(err.status < 500)) console.error(`stalled-server (${kind}):`, err) // the test fails on the status
    if (res.headersSent) return res.destroy()
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  })
}

const server = kind === 'h2' ? http2.createSecureServer(tls, handler) : https.createServer(tls, handler)
// Sessions and sockets the clients cut: their errors are theirs, not the server's.
server.on('sessionError', () => {})
server.on('tlsClientError', () => {})
server.listen(0, '127.0.0.1', () => {
  process.send({ ready: true, port: server.address().port })
})

function memory () {
  globalThis.gc()
  globalThis.gc()
  const { rss, arrayBuffers, heapUsed } = process.memoryUsage()
  return { rss, arrayBuffers, heapUsed, fds: readdirSync('/proc/self/fd').length }
}

process.on('message', (message) => {
  if (message.cmd === 'memory') {
    // Twice, a turn of the loop apart: what a write's callback frees is let go.
    setImmediate(() => process.send({ memory: memory() }))
  } else if (message.cmd === 'close') {
    server.close()
    if (server.closeAllConnections) server.closeAllConnections()
    serve.close().then(() => process.send({ closed: true }))
  }
})
