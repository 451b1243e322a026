'use strict'

// The server side of the soak (bench/soak.js), in its own process:
//   node --expose-gc bench/soak/server.js   (config in the SOAK_SERVER env, JSON)
// node:http (or https with the test certificate, or node:http2's secure server)
// + zcopy.serveStatic(root), on an
// ephemeral port of 127.0.0.1. It answers its parent over IPC:
//   { id, op: 'stats' }       → descriptors (/proc/self/fd), memory, connections, errors
//   { id, op: 'close' }       → calls the current middleware's close(); says whether
//                               it resolved (or rejected) within `timeoutMs`
//   { id, op: 'middleware' }  → replaces the current middleware by a new serveStatic
// It exits when its parent goes away. It does not catch uncaught exceptions: a crash
// is the parent's finding, with this process's stderr.

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const https = require('node:https')
const path = require('node:path')

const config = JSON.parse(process.env.SOAK_SERVER)
const zcopy = require(config.lib)

// Descriptors by what they are: files by path, the rest by kind ("socket", "pipe",
// "anon_inode:[eventpoll]", ...). The readdir's own descriptor is not counted.
function descriptors () {
  const byTarget = {}
  let count = 0
  for (const name of fs.readdirSync('/proc/self/fd')) {
    let target
    try {
      target = fs.readlinkSync(`/proc/self/fd/${name}`)
    } catch {
      continue // the readdir's own descriptor, closed by now
    }
    const kind = /^(socket|pipe):/.exec(target)
    const key = kind ? kind[1] : target
    byTarget[key] = (byTarget[key] || 0) + 1
    count++
  }
  return { count, byTarget }
}

const errors = { beforeHeaders: {}, afterHeaders: {} }
function tally (table, err) {
  const key = err ? `${err.status || ''} ${err.code || err.name}: ${err.message}`.trim().slice(0, 200) : 'unknown'
  table[key] = (table[key] || 0) + 1
}

// The answer when the middleware calls next(): 404, or the error's status (416
// carries its Content-Range) with an empty body. After the headers went out nothing
// can be answered: the connection is destroyed, as Express' final handler does.
function finish (res, err) {
  if (res.headersSent || res.destroyed) {
    tally(errors.afterHeaders, err)
    res.destroy()
    return
  }
  const status = err ? (err.status || 500) : 404
  if (err) tally(errors.beforeHeaders, err)
  for (const name of res.getHeaderNames()) res.removeHeader(name)
  if (err && err.headers) {
    for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value)
  }
  res.statusCode = status
  res.setHeader('Content-Length', '0')
  res.end()
}

let middleware = zcopy.serveStatic(config.root)
let requests = 0
// TCP connections accepted and not closed yet: when each came, whether it is the
// TLS side, and its last request, to say what a connection left after settling
// was doing.
const accepted = new Map()
function handle (req, res) {
  requests++
  const info = accepted.get(req.socket) // none for an HTTP/2 stream
  if (info !== undefined) info.last = { req, res, at: Date.now() }
  middleware(req, res, (err) => finish(res, err))
}

const credentials = () => ({
  key: fs.readFileSync(path.join(config.fixtures, 'localhost-key.pem')),
  cert: fs.readFileSync(path.join(config.fixtures, 'localhost-cert.pem'))
})
const server = config.http2
  ? http2.createSecureServer(credentials(), handle)
  : config.tls ? https.createServer(credentials(), handle) : http.createServer(handle)
// HTTP/2 sessions open (--http2).
const sessions = new Set()
server.on('session', (session) => {
  sessions.add(session)
  session.once('close', () => sessions.delete(session))
})
// Slow readers pause for up to a few seconds mid-response; nothing here should
// time them out. Idle keep-alive connections may close after 30 s (raw Node).
// zcopy.protectServer, unless --raw-node: on TLS the HTTP/1 parser respects its
// pause, and a connection silent for the parent's timeout (a client gone without
// the server noticing), idle keep-alive ones too, is closed (the parent's
// settling time allows for Node's extra periods).
server.keepAliveTimeout = config.rawNode ? 30_000 : config.timeoutMs
if (!config.rawNode) zcopy.protectServer(server, { timeout: config.timeoutMs })

function memory () {
  if (typeof global.gc === 'function') global.gc()
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage()
  return { rss, heapUsed, external, arrayBuffers }
}

function track (socket, secure) {
  accepted.set(socket, { since: Date.now(), secure, last: null })
  socket.once('close', () => accepted.delete(socket))
}
server.on('connection', (socket) => track(socket, false))
// Over TLS, the TLS socket too once its session is up (the raw one stays listed).
if (config.tls) server.on('secureConnection', (socket) => track(socket, true))

function describe (socket, { since, secure, last }) {
  return {
    kind: secure ? 'TLS socket' : 'TCP socket',
    ageMs: Date.now() - since,
    destroyed: socket.destroyed,
    readyState: socket.readyState,
    paused: socket.isPaused(),
    readableFlowing: socket.readableFlowing,
    readableLength: socket.readableLength,
    writableLength: socket.writableLength,
    bytesRead: socket.bytesRead,
    bytesWritten: socket.bytesWritten,
    timeout: socket.timeout,
    lastResponse: last && {
      sinceMs: Date.now() - last.at,
      method: last.req.method,
      url: last.req.url,
      range: last.req.headers.range,
      statusCode: last.res.statusCode,
      headersSent: last.res.headersSent,
      writableEnded: last.res.writableEnded,
      writableFinished: last.res.writableFinished,
      destroyed: last.res.destroyed
    }
  }
}

function connections () {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err ? -1 : n)))
}

const ops = {
  async stats () {
    return { descriptors: descriptors(), memory: memory(), connections: await connections(), sessions: sessions.size, requests, errors }
  },
  async close ({ timeoutMs }) {
    const started = Date.now()
    let timer
    const outcome = await Promise.race([
      Promise.resolve().then(() => middleware.close()).then(
        () => ({ resolved: true }),
        (err) => ({ resolved: false, rejected: String(err && err.stack ? err.stack : err) })),
      new Promise((resolve) => { timer = setTimeout(() => resolve({ resolved: false, timedOut: true }), timeoutMs) })
    ])
    clearTimeout(timer)
    return { ...outcome, ms: Date.now() - started }
  },
  async connectionsLeft () {
    return { left: [...accepted].map(([socket, info]) => describe(socket, info)) }
  },
  async closeConnections () {
    if (server.closeAllConnections) server.closeAllConnections()
    for (const session of sessions) session.destroy()
    return {}
  },
  async middleware () {
    middleware = zcopy.serveStatic(config.root)
    errors.beforeHeaders = {}
    errors.afterHeaders = {}
    return {}
  }
}

process.on('message', async (message) => {
  const reply = await ops[message.op](message)
  process.send({ id: message.id, ...reply })
})
process.on('disconnect', () => process.exit(0))

const fdsAtStart = descriptors()
server.listen(0, '127.0.0.1', () => {
  process.send({
    ready: true,
    port: server.address().port,
    zeroCopy: zcopy.zeroCopyAvailable,
    pid: process.pid,
    fdsAtStart
  })
})
