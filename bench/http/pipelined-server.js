'use strict'

// serveStatic behind an application's own server, for bench/http/pipelined.js,
// public API only:
//
//   node bench/http/pipelined-server.js MODE ROOT [LIB]
//
// MODE: serveStatic (a plain node:http server, serveStatic its handler),
// express (serveStatic as Express middleware), serveStatic+lane or
// express+lane (the same with zcopy.nativeLane(server) in front, listening
// instead of the server, and serveStatic's onReplayable: lane.offer, so that
// the lane reads one request of a connection at a time and answers in C what
// it was offered). ROOT: the directory served. LIB: the package's
// lib/index.js to load (another checkout's, for an A/B); a +lane MODE needs
// one with nativeLane. Sends { port } over IPC once it listens.

const http = require('node:http')
const { join } = require('node:path')

const MODES = ['serveStatic', 'express', 'serveStatic+lane', 'express+lane']

async function main () {
  const [mode, root, lib = join(__dirname, '..', '..', 'lib', 'index.js')] = process.argv.slice(2)
  if (!MODES.includes(mode) || root === undefined) throw new Error(`usage: pipelined-server.js MODE ROOT [LIB], MODE one of ${MODES.join(', ')}`)
  const zcopy = require(lib)
  const laned = mode.endsWith('+lane')
  if (laned && typeof zcopy.nativeLane !== 'function') throw new Error(`${lib} has no nativeLane (zcopy.nativeLane came with commit a6d05ab): ${mode} cannot run with it`)
  const server = http.createServer()
  const lane = laned ? zcopy.nativeLane(server) : null
  const serve = zcopy.serveStatic(root, lane === null ? {} : { onReplayable: lane.offer })
  const notFound = (req, res) => {
    if (res.headersSent) return res.destroy()
    res.statusCode = 404
    res.end()
  }
  server.on('request', mode.startsWith('express')
    ? require('express')().use(serve).use(notFound)
    : (req, res) => serve(req, res, () => notFound(req, res)))
  if (lane !== null) {
    const { port } = await lane.listen(0, '127.0.0.1')
    return process.send({ port })
  }
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
}

main().catch((err) => {
  console.error(err.message)
  process.exit(1)
})
