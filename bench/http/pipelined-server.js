'use strict'

// serveStatic in a plain node:http server, for bench/http/pipelined.js, public
// API only:
//
//   node bench/http/pipelined-server.js ROOT [LIB]
//
// LIB: the package's lib/index.js to load (another checkout's, for an A/B).
// Sends { port } over IPC once it listens.

const http = require('node:http')
const { join } = require('node:path')

const [root, lib = join(__dirname, '..', '..', 'lib', 'index.js')] = process.argv.slice(2)
const serve = require(lib).serveStatic(root)
const server = http.createServer((req, res) => serve(req, res, () => {
  if (res.headersSent) return res.destroy()
  res.statusCode = 404
  res.end()
}))
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
