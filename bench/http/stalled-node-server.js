'use strict'

// The Node servers of bench/http/stalled.js, in their own process, each over
// TLS (node:https, or node:http2 with `h2`) with public API only:
//
//   node bench/http/stalled-node-server.js MODE tls|h2 CERT KEY ROOT
//
//   node-idle   the handler never answers: what Node itself holds for a TLS
//               connection (or an HTTP/2 stream) that sent a request;
//   node-write  the handler writes the head (the file's Content-Length) and
//               one 16 KiB piece (one TLS record), then nothing: Node's floor
//               for a response whose client stopped reading;
//   node-stream the handler writes the whole file's length from one shared
//               16 KiB piece, one write at a time, each once the last one
//               called back: Node's floor for a response that moved megabytes
//               before its client stopped reading, with no buffer of its own;
//   serveStatic zcopy's serveStatic in this process, as `zcopy serve` runs it,
//               so that its memory can be broken down.
//
// Over IPC: { ready, port } once it listens; { memory: true } is answered with
// { memory: process.memoryUsage() } (rss, heapTotal, heapUsed, external,
// arrayBuffers) and `young`, the bytes V8's young generation has committed (of
// heapTotal; V8 grows it when much outlives its collections), no collection
// forced.

const fs = require('node:fs')
const http2 = require('node:http2')
const https = require('node:https')
const v8 = require('node:v8')
const { join } = require('node:path')

const [mode, protocol, certPath, keyPath, root] = process.argv.slice(2)
const PIECE = Buffer.alloc(16 * 1024, 'z')

// The size of the file `req` names, 0 when there is none.
function sizeOf (req) {
  try {
    return fs.statSync(join(root, decodeURIComponent(req.url.split('?')[0]))).size
  } catch {
    return 0
  }
}

function handlerFor () {
  if (mode === 'node-idle') return () => {}
  if (mode === 'node-write') {
    return (req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': sizeOf(req) })
      res.write(PIECE)
    }
  }
  if (mode === 'node-stream') {
    return (req, res) => {
      const size = sizeOf(req)
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size })
      let sent = 0
      const next = () => {
        if (sent >= size) return res.end()
        const length = Math.min(PIECE.length, size - sent)
        sent += length
        res.write(length < PIECE.length ? PIECE.subarray(0, length) : PIECE, next)
      }
      next()
    }
  }
  if (mode === 'serveStatic') {
    const serve = require('../../lib/index.js').serveStatic(root)
    return (req, res) => serve(req, res, () => {
      if (res.headersSent) return res.destroy()
      res.statusCode = 404
      res.end()
    })
  }
  throw new Error(`stalled-node-server: unknown mode ${JSON.stringify(mode)}`)
}

function youngGeneration () {
  const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
  return young === undefined ? 0 : young.physical_space_size
}

const options = { cert: fs.readFileSync(certPath), key: fs.readFileSync(keyPath) }
const handler = handlerFor()
const server = protocol === 'h2' ? http2.createSecureServer(options, handler) : https.createServer(options, handler)
server.on('sessionError', () => {})
server.on('tlsClientError', () => {})
server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }))

process.on('message', (message) => {
  if (message.memory) process.send({ memory: { ...process.memoryUsage(), young: youngGeneration() } })
})
