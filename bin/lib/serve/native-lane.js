'use strict'

// zcopy serve --native-lane (issue 64): the addon's lane (src/lane.h) owns the
// listening socket and its connections. A whole request without a body that it
// has no answer for is lent to Node's server alone (lane-twin.js), and the
// lane reads the connection's next request once Node's answer is written.
// Every other connection it cannot go on with (a body, an upgrade, a head it
// defers) comes back here as a descriptor and the bytes the lane read from it
// but did not consume, and becomes a net.Socket of Node's own HTTP server, the
// bytes put back in front: from then Node owns it, parses those bytes first
// and keeps every option and protection zcopy serve sets on the server.
// Plain HTTP only: with TLS or HTTP/2 the lane is off. With --workers each
// worker's lane accepts from the one socket the primary listens on
// (shared-listener.js).

const net = require('node:net')
const engine = require('../../../lib/engine')
const { CODINGS, readLaneRecords } = require('./lane-log')
const { LaneRows } = require('./lane-rows')
const { lendTo } = require('./lane-twin')
const { inheritedListener, listenAddress } = require('./shared-listener')

// How often a stop looks whether the lane's answers in flight are done.
const POLL_MS = 50
// How often the lane's hits count as uses of their open-file cache entries:
// well within the cache's sweep period (10 s), after which an unused entry,
// and with it the lane's row, is dropped.
const USES_MS = 2000

// → null when the lane can run with `config`, else why not (the line says it).
function laneRefusal (config) {
  if (engine.Lane === null) return 'the native addon is not loaded'
  if (config.tls !== null) return 'TLS and HTTP/2 stay on Node\'s stack'
  // Round-robin: the primary would accept every connection and pass it on.
  const policy = process.env.NODE_CLUSTER_SCHED_POLICY
  if (config.workers > 1 && policy && policy !== 'none') return `NODE_CLUSTER_SCHED_POLICY=${policy} hands connections out through Node's stack`
  return null
}

// Header fields the lane writes itself, as Node would (src/lane.cc): an
// answer that has one set by hand is not replayed.
const LANE_WRITES = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

// → { offer, handTo(server), listen(port, host) → Promise of an address like
// server.address()'s, stop(timeoutMs) → Promise, answersInFlight() }. `offer` is serveStatic's
// onReplayable: the answers it hears are registered with the lane, which
// replays them to the same requests (same method, target bytes, Host,
// Accept-Encoding, If-None-Match, If-Modified-Since and Range) until the open-file
// cache drops the file's entry (or the variant store its variant).
// `logAnswer(answer)` (request-log.js's logLaneAnswer, or null: no log) hears
// each answer the lane wrote, in batches, the last at stop.
function createNativeLane (logAnswer = null) {
  let lane = null
  const targets = new WeakMap() // request → its target as it came (app.js may rewrite req.url)
  let rows = null // the lane's rows, bounded (lane-rows.js)
  let usesTimer = null
  let lending = null // the requests lent to Node's server (lane-twin.js)

  function handTo (server) {
    lane = new engine.Lane((fd, bytes) => handOff(server, fd, bytes), {
      // What Node's server writes, and when it closes an idle connection.
      keepAliveMs: server.keepAliveTimeout,
      keepAliveLine: server.keepAliveTimeout > 0 ? `Keep-Alive: timeout=${Math.floor(server.keepAliveTimeout / 1000)}\r\n` : '',
      idleMs: server.timeout,
      headTimeoutMs: server.headersTimeout, // then Node's 408
      ...(logAnswer === null ? {} : { onLog: (records) => readLaneRecords(records).forEach(logAnswer) }),
      // A whole request without a body that the lane has no answer for goes
      // to Node alone (lane-twin.js); the lane keeps the connection.
      onLend: (...args) => lending.lend(...args),
      onWritten: (id) => lending.written(id),
      onGone: (id, fileBytes, fileShort) => lending.gone(id, fileBytes, fileShort)
    })
    lending = lendTo(server, lane)
    server.prependListener('request', (req) => targets.set(req, req.url))
    rows = new LaneRows(lane)
    usesTimer = setInterval(() => rows.takeHits(), USES_MS).unref()
  }

  function offer (req, res, { fd, stat, bytes, range, source, whenDropped, used }) {
    const target = targets.get(req)
    if (lane === null || target !== req.url) return // --single's index.html for another path: not the path's own answer
    // Node never wrote this answer (its socket went first: res.end() then
    // writes nothing, not even the head, and statusMessage stays unset).
    if (!res.headersSent) return
    const host = req.headers.host ?? null
    const coding = req.headers['accept-encoding'] ?? null
    const conditions = { ifNoneMatch: req.headers['if-none-match'] ?? null, ifModifiedSince: req.headers['if-modified-since'] ?? null, range: req.headers.range ?? null }
    const key = JSON.stringify([req.method, target, host, coding, conditions.ifNoneMatch, conditions.ifModifiedSince, conditions.range])
    if (rows.has(key)) return
    const head = headOf(res)
    if (head === null) return
    const noBody = res.statusCode === 304
    // What the lane checks (fstat, at most once a second): the body's file,
    // and the file a variant or sibling stands for. A 304 of a variant kept
    // in memory has no file of its own: its source's is checked.
    const own = fd !== null ? { fd, stat } : noBody ? source : null
    const file = own === null ? null : { fd: own.fd, size: own.stat.size, mtimeMs: own.stat.mtimeMs, noBody, ...rangeFields(range) }
    const from = source === null || own === source ? null : { fd: source.fd, size: source.stat.size, mtimeMs: source.stat.mtimeMs }
    // The access log names the answer's coding as the JavaScript path does.
    const logCoding = CODINGS.indexOf(String(res.getHeader('content-encoding') ?? '') || null)
    if (logCoding < 0) return
    const identity = fileIdentity(source ?? { stat })
    if (!rows.admits(identity)) return
    const body = noBody ? null : rows.bodyRoom(bytes)
    if (!noBody && bytes !== null && body === null && file === null) return // in memory only, and no room
    const id = lane.add(req.method, target, host, coding, head, body, file, conditions, from, logCoding)
    if (id === 0) return // the file changed since its stat
    rows.added(key, id, { file: identity, body, used, whenDropped })
  }

  // A --workers worker accepts from the socket its primary listens on.
  function listen (port, host) {
    const shared = inheritedListener()
    return listenAddress(host, (address, ipv6) => shared === null ? lane.listen(address, port, ipv6) : lane.adopt(shared))
  }

  // No more connections; the idle ones closed at once, the answers in flight
  // given up to timeoutMs; then every connection is cut.
  function stop (timeoutMs) {
    lane.stop()
    const started = Date.now()
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        if (lane.connections() > 0 && Date.now() - started < timeoutMs) return
        clearInterval(timer)
        clearInterval(usesTimer)
        lane.destroy()
        resolve()
      }, POLL_MS)
    })
  }

  // Once stop() has begun: the answers the lane is still writing (it closed
  // every other connection), but for Node's answers to lent requests, which
  // Node's server counts as its own.
  function answersInFlight () {
    return lane.connections() - lending.lent()
  }

  return { offer, handTo, listen, stop, answersInFlight }
}

// What a row's bounds count it under (lane-rows.js): the file a body is or
// stands for, by device and inode, or null when its stat is not known.
function fileIdentity ({ stat }) {
  return stat === null || stat === undefined ? null : `${stat.dev}:${stat.ino}`
}

// The status line and header fields of `res` as Node wrote them, but for Date,
// Connection and Keep-Alive (→ Buffer), or null when the lane cannot write
// the rest as Node does. Only a 304 has no Content-Length (Node writes none,
// and no body).
function headOf (res) {
  let head = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`
  let length = false
  for (const name of res.getRawHeaderNames()) {
    const lower = name.toLowerCase()
    if (LANE_WRITES.has(lower)) return null
    if (lower === 'content-length') length = true
    for (const value of [].concat(res.getHeader(name))) head += `${name}: ${value}\r\n`
  }
  return length !== (res.statusCode === 304) ? Buffer.from(head, 'latin1') : null
}

// The part of the file a 206 sends, as the lane's add() takes it.
function rangeFields (range) {
  return range === null ? {} : { start: range.start, length: range.end - range.start + 1 }
}

// Node's server takes the connection: `bytes` go back in front of what the
// socket reads next, so that its parser sees the request the lane began reading.
function handOff (server, fd, bytes) {
  let socket
  try {
    socket = new net.Socket({ fd, readable: true, writable: true })
  } catch {
    engine.closeFd(fd)
    return
  }
  if (bytes.length > 0) socket.unshift(bytes)
  server.emit('connection', socket)
}

module.exports = { createNativeLane, laneRefusal }
