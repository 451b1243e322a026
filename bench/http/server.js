'use strict'

// One static file server for the benchmark, in its own process:
//   node bench/http/server.js <kind> <root>
// It listens on an ephemeral port of 127.0.0.1 and sends { port } to its parent.

const http = require('node:http')

const KINDS = {
  'zcopy (node:http)' (root) {
    const serve = require('../../lib').serveStatic(root)
    return startHttp((req, res) => serve(req, res, () => notFound(res)))
  },
  'zcopy (Express)' (root) {
    const express = require('express')
    return startHttp(express().use(require('../../lib').serveStatic(root)))
  },
  'express.static' (root) {
    const express = require('express')
    return startHttp(express().use(express.static(root)))
  },
  sirv (root) {
    const serve = require('sirv')(root, { etag: true })
    return startHttp((req, res) => serve(req, res, () => notFound(res)))
  },
  async '@fastify/static' (root) {
    const app = require('fastify')({ logger: false })
    app.register(require('@fastify/static'), { root })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return app.server.address().port
  }
}

function notFound (res) {
  res.statusCode = 404
  res.end()
}

function startHttp (handler) {
  const server = http.createServer(handler)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
}

if (require.main === module) {
  const [kind, root] = process.argv.slice(2)
  if (!KINDS[kind]) throw new Error(`unknown server kind ${kind}`)
  Promise.resolve(KINDS[kind](root)).then((port) => process.send({ port }))
}

module.exports = { KINDS: Object.keys(KINDS) }
