// serveStatic behind a plain node:http server or Express, or sendFile in a
// node:http handler, in its own process, for pipelining-bound.test.mjs; and
// serveStatic behind node:http or Express with zcopy's native lane in front
// (zcopy.nativeLane, listening instead of the server), for
// test/lane/pipelining.test.mjs. argv[2], the kind: http, express or
// sendFile; http+lane or express+lane; http+lane+offer or express+lane+offer
// (serveStatic's onReplayable: lane.offer, so that the lane answers in C what
// it was offered). argv[3]: the directory to serve (with compress: true).
// Every request that reaches the middleware (or the handler) is counted,
// before zcopy sees it: with the lane, those it lent to the server, not those
// it answered itself. Runs with --expose-gc. Over IPC it sends
// { ready, port }, and answers { cmd: 'handled' } with { handled },
// { cmd: 'heap' } with { heap }, the heap in use after two full collections,
// and { cmd: 'compressed' } with { compressed } once no variant is being made.

import http from 'node:http'
import { join } from 'node:path'
import express from 'express'
import zcopy from '../../../lib/index.js'

const [kind, root] = process.argv.slice(2)
const [app, ...front] = kind.split('+')
const server = http.createServer()
const lane = front.includes('lane') ? zcopy.nativeLane(server) : null
const serve = zcopy.serveStatic(root, { compress: true, ...(front.includes('offer') ? { onReplayable: lane.offer } : {}) })
let handled = 0

function counted (req, res, next) {
  handled++
  if (app !== 'sendFile') return serve(req, res, next)
  zcopy.sendFile(req, res, join(root, decodeURIComponent(req.url))).catch(next)
}

// What the app answers when serveStatic passes: 404, or the error's status.
function fallback (err, req, res, next) {
  if (res.headersSent) return res.destroy()
  res.statusCode = err ? err.status || 500 : 404
  const body = res.statusCode === 404 ? 'not found' : 'error'
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

server.on('request', app === 'express'
  ? express().use(counted).use((req, res) => fallback(null, req, res)).use(fallback)
  : (req, res) => counted(req, res, (err) => fallback(err, req, res)))
if (lane !== null) {
  const { port } = await lane.listen(0, '127.0.0.1')
  process.send({ ready: true, port })
} else {
  server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }))
}

process.on('message', (message) => {
  if (message.cmd === 'handled') process.send({ handled })
  else if (message.cmd === 'heap') {
    globalThis.gc()
    globalThis.gc()
    process.send({ heap: process.memoryUsage().heapUsed })
  } else if (message.cmd === 'compressed') serve.compressed().then(() => process.send({ compressed: true }))
})
