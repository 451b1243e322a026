'use strict'

// One static file server for the benchmark, in its own process:
//   node bench/http/server.js <kind> <root> [workers] [cert.pem key.pem]
// It listens on an ephemeral port of 127.0.0.1 and sends { port } to its parent;
// with workers > 1, from that many processes (cluster.js); with a certificate
// and key, over TLS (node:https, Fastify's `https` option). The zcopy kinds load
// the zcopy in ZCOPY_BENCH_LIB (another checkout's lib/ directory) when it is
// set, else this checkout's. startServer() forks it.

const { fork } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const path = require('node:path')
const etag = require('etag')
const mime = require('mime-types')
const { serveInCluster } = require('./cluster')

const LIB = process.env.ZCOPY_BENCH_LIB || path.join(__dirname, '..', '..', 'lib')

const KINDS = {
  'zcopy (node:http)' (root) {
    const serve = require(LIB).serveStatic(root)
    return startHttp((req, res) => serve(req, res, () => notFound(res)))
  },
  'zcopy (Express)' (root) {
    const express = require('express')
    return startHttp(express().use(require(LIB).serveStatic(root)))
  },
  'express.static' (root) {
    const express = require('express')
    return startHttp(express().use(express.static(root)))
  },
  sirv (root) {
    const serve = require('sirv')(root, { etag: true })
    return startHttp((req, res) => serve(req, res, () => notFound(res)))
  },
  '@fastify/static' (root) {
    return startFastify(require('@fastify/static'), { root })
  },
  // zcopy/fastify, whose default set-up answers URLs as serveStatic does, and
  // with an option that takes its long way (a lookup per request, as
  // @fastify/static's), beside the peer with the same option. Run only when
  // named in --servers.
  'zcopy (Fastify)' (root) {
    return startFastify(require(path.join(LIB, 'adapters', 'fastify')), { root })
  },
  'zcopy (Fastify + allowedPath)' (root) {
    return startFastify(require(path.join(LIB, 'adapters', 'fastify')), { root, allowedPath: () => true })
  },
  // zcopy/koa and the peer it replaces, koa-static, in a Koa app (opt-in).
  'zcopy (Koa)' (root) {
    return startKoa(require(path.join(LIB, 'adapters', 'koa'))(root))
  },
  'koa-static' (root) {
    return startKoa(require('koa-static')(root))
  },
  '@fastify/static + allowedPath' (root) {
    return startFastify(require('@fastify/static'), { root, allowedPath: () => true })
  },
  // Not a file server: the floor Node's HTTP stack sets on this machine. Each file
  // is read into memory once, then every request is one res.end(buffer).
  'node:http res.end(buffer)' (root) {
    const buffers = new Map()
    return startHttp((req, res) => {
      let body = buffers.get(req.url)
      if (body === undefined) {
        body = fs.readFileSync(path.join(root, req.url))
        buffers.set(req.url, body)
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length })
      res.end(body)
    })
  },
  // Node's floor with the six headers a static server sends, each stored with
  // setHeader so that res.getHeader (morgan) sees it, their values formatted once
  // per path: what those headers alone cost.
  'headers floor (6 × setHeader + res.end)' (root) {
    const files = new Map()
    return startHttp((req, res) => {
      const file = readOnce(files, root, req.url, (headers) => headers)
      if (file === null) return notFound(res)
      setHeaders(res, file.headers)
      res.end(file.body)
    })
  },
  // The same six headers through writeHead's fast path: Node formats them straight
  // into the head without storing them, so res.getHeader (morgan) does not see
  // them. Not a way to serve; the bound on what six headers can cost through
  // Node's public API (opt-in).
  'headers floor via writeHead (unseen by getHeader)' (root) {
    const files = new Map()
    return startHttp((req, res) => {
      const file = readOnce(files, root, req.url, Object.fromEntries)
      if (file === null) return notFound(res)
      res.writeHead(200, file.headers)
      res.end(file.body)
    })
  },
  // Not a file server either: what a static server built the usual way pays per
  // request, minus the file reading. A stat, six headers formatted from it, then
  // the body from memory (read once per path, as above).
  'static floor (stat + setHeader + res.end)' (root) {
    const buffers = new Map()
    return startHttp((req, res) => {
      const file = path.join(root, req.url)
      const stat = statOrNull(file)
      if (stat === null) return notFound(res)
      let body = buffers.get(file)
      if (body === undefined) {
        body = fs.readFileSync(file)
        buffers.set(file, body)
      }
      setHeaders(res, staticHeaders(file, stat))
      res.end(body)
    })
  }
}

// The file at `url` under `root` as the header floors serve it, read and its six
// headers formatted on its first request only (kept in `files`): { body,
// headers: shape([name, value] pairs) }, or null when there is no such file.
function readOnce (files, root, url, shape) {
  let file = files.get(url)
  if (file === undefined) {
    const name = path.join(root, url)
    const stat = statOrNull(name)
    if (stat === null) return null
    file = { body: fs.readFileSync(name), headers: shape(staticHeaders(name, stat)) }
    files.set(url, file)
  }
  return file
}

function statOrNull (file) {
  try {
    return fs.statSync(file)
  } catch {
    return null
  }
}

// The six headers a static server sends (zcopy's, send's), formatted from the
// file's stat: [name, value] pairs.
function staticHeaders (file, stat) {
  return [
    ['Content-Type', mime.contentType(path.extname(file)) || 'application/octet-stream'],
    ['Content-Length', String(stat.size)],
    ['Last-Modified', stat.mtime.toUTCString()],
    ['ETag', etag(stat)],
    ['Cache-Control', 'public, max-age=0'],
    ['Accept-Ranges', 'bytes']
  ]
}

function setHeaders (res, headers) {
  for (const [name, value] of headers) res.setHeader(name, value)
}

async function startFastify (plugin, options) {
  const app = require('fastify')({ logger: false, ...(tls && { https: tls }) })
  app.register(plugin, options)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app.server.address().port
}

function notFound (res) {
  res.statusCode = 404
  res.end()
}

// { cert, key } (PEM contents) when the run is over TLS, else null.
let tls = null

function startKoa (middleware) {
  const Koa = require('koa')
  const app = new Koa()
  app.silent = true // as @fastify/static's logger is off: a client that hangs up mid-body is no line
  app.use(middleware)
  return startHttp(app.callback())
}

function startHttp (handler) {
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
}

if (require.main === module) {
  const [kind, root, workers = '1', cert, key] = process.argv.slice(2)
  if (!KINDS[kind]) throw new Error(`unknown server kind ${kind}`)
  if (cert) tls = { cert: fs.readFileSync(cert), key: fs.readFileSync(key) }
  const start = () => Promise.resolve(KINDS[kind](root))
  if (Number(workers) > 1) serveInCluster(Number(workers), start)
  else start().then((port) => process.send({ port }))
}

// Forks this file as the server `kind` over `root` → { port, pid, stop() } once it
// listens (pid: the primary's with workers > 1). `tls`: { cert, key } (paths) or
// null; `env`: variables set for it on top of this process's (ZCOPY_BENCH_LIB);
// `wrap`: an argv prefix that runs Node, e.g. ['valgrind', '--tool=callgrind']
// (the IPC channel's descriptor and NODE_CHANNEL_FD pass through it); `signal`:
// an AbortSignal that kills it. Rejects if it exits before listening.
async function startServer (kind, root, { workers = 1, tls = null, env = {}, wrap = [], signal } = {}) {
  const certificate = tls ? [tls.cert, tls.key] : []
  const command = wrap.length ? { execPath: wrap[0], execArgv: [...wrap.slice(1), process.execPath] } : {}
  const child = fork(__filename, [kind, root, String(workers), ...certificate], {
    stdio: 'inherit', env: { ...process.env, ...env }, signal, ...command
  })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `exit code ${code}`)))
  const port = await new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve(port))
    child.on('error', reject) // not started, or killed by `signal`
    exited.then((how) => reject(new Error(`bench server '${kind}' exited before listening (${how})`)))
  })
  return {
    port,
    pid: child.pid,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) child.kill()
      await exited
    }
  }
}

// The references, not file servers: listed last, after nginx.
const FLOORS = ['node:http res.end(buffer)', 'headers floor (6 × setHeader + res.end)', 'static floor (stat + setHeader + res.end)']
// Run only when named in --servers.
const OPT_IN = ['headers floor via writeHead (unseen by getHeader)', 'zcopy (Fastify)', 'zcopy (Fastify + allowedPath)', '@fastify/static + allowedPath', 'zcopy (Koa)', 'koa-static']

module.exports = { KINDS: Object.keys(KINDS), FLOORS, OPT_IN, startServer }
