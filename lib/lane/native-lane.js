'use strict'

// nativeLane(server, options) (issue 64, and issue 62's pipelining bound behind
// an application's own server): the addon's lane (src/lane.h) owns the
// listening socket and its connections in front of a node:http server. It
// reads one request at a time, as nginx does, and answers in C the requests
// it has seen answered before (serveStatic's onReplayable: `offer`). A
// request it has no answer for is lent to the server alone (twin.js), its
// body as it comes, and the lane reads the connection's next request once
// the server's answer is written. Every other connection it cannot go on
// with (an upgrade, a head it cannot frame) comes back here as a
// descriptor and the
// bytes the lane read from it but did not consume, and becomes a net.Socket of
// the server, the bytes put back in front: from then Node owns it, parses
// those bytes first and keeps every option and protection set on the server.
// Plain HTTP/1.1 only (TLS and HTTP/2 stay on Node's stack).

const http = require('node:http')
const net = require('node:net')
const engine = require('../engine')
const { invalidArgType, validateInteger, validateObject } = require('../engine')
const { markFronted } = require('../http')
const { listenAddress } = require('./listen-address')
const { CODINGS, readLaneRecords } = require('./records')
const { LaneRows } = require('./rows')
const { lendTo } = require('./twin')

// How often a close looks whether the lane's answers in flight are done.
const POLL_MS = 50
// How often the lane's hits count as uses of their open-file cache entries:
// well within the cache's sweep period (10 s), after which an unused entry,
// and with it the lane's row, is dropped.
const USES_MS = 2000

// Header fields the lane writes itself, as Node would (src/lane.cc): an
// answer that has one set by hand is not replayed.
const LANE_WRITES = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

// Whether the lane can run in this process: the addon is loaded.
function laneLoaded () {
  return engine.Lane !== null
}

// nativeLane(server, options) → a NativeLane. `offer` is serveStatic's
// onReplayable: the answers it hears are registered with the lane, which
// replays them to the same requests (same method, target bytes, Host,
// Accept-Encoding, If-None-Match, If-Modified-Since and Range) until the
// open-file cache drops the file's entry (or the variant store its variant).
// `options.onAnswer(answer)` hears each answer the lane wrote itself
// (records.js), in batches, the last at close.
function nativeLane (server, options = {}) {
  if (!(server instanceof http.Server)) throw invalidArgType('server', 'a node:http Server (the lane is plain HTTP/1.1)', server)
  validateObject('options', options)
  const { onAnswer = null } = options
  if (onAnswer !== null && typeof onAnswer !== 'function') throw invalidArgType('options.onAnswer', 'a function', onAnswer)
  if (!laneLoaded()) {
    const err = new Error(`zcopy.nativeLane needs the native addon, which did not load${engine.loadError === null ? '' : `: ${engine.loadError.message}`}`)
    err.code = 'ERR_ZCOPY_NO_ADDON'
    throw err
  }
  if (server.listening) throw new Error('zcopy.nativeLane: the server is listening already; call lane.listen() instead of server.listen()')
  return new NativeLane(server, onAnswer)
}

class NativeLane {
  constructor (server, onAnswer) {
    this.server = server
    this.targets = new WeakMap() // request → its target as it came (an app may rewrite req.url)
    this.handedOff = new Set() // the sockets handed to the server for good (close() ends them)
    let lending = null // the requests lent to the server (twin.js)
    this.lane = new engine.Lane((fd, bytes) => this.handOff(fd, bytes), {
      // What Node's server writes, and when it closes an idle connection.
      keepAliveMs: server.keepAliveTimeout,
      keepAliveLine: server.keepAliveTimeout > 0 ? `Keep-Alive: timeout=${Math.floor(server.keepAliveTimeout / 1000)}\r\n` : '',
      idleMs: server.timeout,
      headTimeoutMs: server.headersTimeout, // then Node's 408
      ...(onAnswer === null ? {} : { onLog: (records) => readLaneRecords(records).forEach(onAnswer) }),
      // A request the lane has no answer for goes to the server alone, its
      // body as it comes (twin.js); the lane keeps the connection.
      onLend: (id, bytes, ends) => lending.lend(id, bytes, ends),
      onBody: (id, bytes) => lending.body(id, bytes),
      onWritten: (id) => lending.written(id),
      onGone: (id, fileBytes, fileShort) => lending.gone(id, fileBytes, fileShort)
    })
    lending = lendTo(server, this.lane)
    this.lending = lending
    server.prependListener('request', (req) => this.targets.set(req, req.url))
    this.rows = new LaneRows(this.lane) // the lane's rows, bounded (rows.js)
    this.usesTimer = setInterval(() => this.rows.takeHits(), USES_MS).unref()
    this.closing = null
    this.listened = false
    this.offer = this.offer.bind(this)
    markFronted(server)
  }

  offer (req, res, { fd, stat, bytes, range, source, whenDropped, used }) {
    const target = this.targets.get(req)
    if (this.closing !== null || !asCameIn(req, target)) return
    // Node never wrote this answer (its socket went first: res.end() then
    // writes nothing, not even the head, and statusMessage stays unset).
    if (!res.headersSent || !forEveryone(req, res)) return
    const host = req.headers.host ?? null
    const coding = req.headers['accept-encoding'] ?? null
    const conditions = { ifNoneMatch: req.headers['if-none-match'] ?? null, ifModifiedSince: req.headers['if-modified-since'] ?? null, range: req.headers.range ?? null }
    const key = JSON.stringify([req.method, target, host, coding, conditions.ifNoneMatch, conditions.ifModifiedSince, conditions.range])
    const { rows } = this
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
    const id = this.lane.add(req.method, target, host, coding, head, body, file, conditions, from, logCoding)
    if (id === 0) return // the file changed since its stat
    rows.added(key, id, { file: identity, body, used, whenDropped })
  }

  // listen(port, host) or listen({ port, host }) binds and listens, as
  // server.listen does: `host` resolved by dns.lookup, and without one every
  // interface (:: for both families, or 0.0.0.0 where IPv6 is off).
  // listen({ fd, host }) accepts from a listening descriptor this process was
  // given (zcopy serve's --workers share their primary's); `host` is then
  // what the address says it is bound to.
  listen (port = 0, host = undefined) {
    const where = typeof port === 'object' && port !== null ? port : { port, host }
    const at = where.host ?? null
    if (at !== null && typeof at !== 'string') throw invalidArgType('host', 'a string', at)
    let listening
    if (where.fd !== undefined) {
      const fd = validateInteger('fd', where.fd, 0, 2 ** 31 - 1)
      listening = listenAddress(at ?? '0.0.0.0', () => this.lane.adopt(fd))
    } else {
      const wanted = validateInteger('port', where.port ?? 0, 0, 65535)
      const bind = (address, ipv6) => this.lane.listen(address, wanted, ipv6)
      listening = at === null ? anyAddress(bind) : listenAddress(at, bind)
    }
    return listening.then((address) => {
      this.announce()
      return address
    })
  }

  // The server hears that it serves, as from its own listen: Node starts its
  // connection checks then (headersTimeout and requestTimeout on the requests
  // the lane lends and the connections it hands off; closeIdleConnections()
  // and closeAllConnections() reach them). server.address() stays null: the
  // address is the lane's.
  announce () {
    if (this.listened) return
    this.listened = true
    this.server.emit('listening')
  }

  // The server takes the connection: `bytes` go back in front of what the
  // socket reads next, so that its parser sees the request the lane began reading.
  handOff (fd, bytes) {
    let socket
    try {
      socket = new net.Socket({ fd, readable: true, writable: true })
    } catch {
      engine.closeFd(fd)
      return
    }
    if (bytes.length > 0) socket.unshift(bytes)
    this.handedOff.add(socket)
    socket.once('close', () => this.handedOff.delete(socket))
    this.server.emit('connection', socket)
  }

  // server.close() for a server the lane is in front of: no more
  // connections; the idle ones closed at once, the lane's and the server's,
  // the answers in flight given up to timeoutMs (by default, until they are
  // done: the server's timeouts bound them), each connection closed once it
  // is idle; then every connection is cut, and the server closes (its
  // 'close'). Once only: a second call gets the first's promise.
  close (timeoutMs = Infinity) {
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw invalidArgType('timeoutMs', 'a number of milliseconds, 0 or more (Infinity: until done)', timeoutMs)
    if (this.closing !== null) return this.closing
    const { lane, server, handedOff } = this
    lane.stop()
    server.closeIdleConnections()
    const started = Date.now()
    this.closing = new Promise((resolve) => {
      const timer = setInterval(() => {
        server.closeIdleConnections()
        const busy = lane.connections() > 0 || handedOff.size > 0
        if (busy && Date.now() - started < timeoutMs) return
        clearInterval(timer)
        clearInterval(this.usesTimer)
        lane.destroy()
        for (const socket of handedOff) socket.destroy()
        server.close()
        resolve()
      }, POLL_MS)
    })
    return this.closing
  }

  // The connections the lane holds now (idle, reading a request, writing an
  // answer, its own or the rest of a lent one's body), but for those with a
  // request lent to the server, which counts them as its own (as it counts
  // those handed to it): with server.getConnections(), every one.
  connections () {
    return this.lane.connections() - this.lending.lent()
  }

  // Once close() has begun: the answers the lane is still writing (it closed
  // every other connection of its own).
  answersInFlight () {
    return this.connections()
  }
}

// Every interface, as server.listen() without a host: → Promise of the address.
async function anyAddress (bind) {
  try {
    return { address: '::', family: 'IPv6', port: bind('::', true) }
  } catch (err) {
    if (err.code !== 'EAFNOSUPPORT' && err.code !== 'EADDRNOTAVAIL') throw err
    return { address: '0.0.0.0', family: 'IPv4', port: bind('0.0.0.0', false) }
  }
}

// Whether the request reached the answer as it came in: req.url as the lane
// read it, or (Express, connect) only a mount's path taken off its front. An
// app that rewrote the target (a single-page app's index.html for another
// path) made an answer that is not the target's own.
function asCameIn (req, target) {
  if (target === undefined) return false
  if (req.url === target) return true
  return req.originalUrl === target && typeof req.baseUrl === 'string' && req.baseUrl + req.url === target
}

// Whether an answer may be replayed to anyone who sends the same request
// bytes, as a shared cache would store it (RFC 9111 §3, §3.5): not one to a
// request with credentials, not one that sets a cookie, not one the app
// marked private or no-store, and none that varies on more than
// Accept-Encoding (the lane's key).
function forEveryone (req, res) {
  if (req.headers.authorization !== undefined) return false
  if (res.hasHeader('set-cookie')) return false
  if (/\b(private|no-store)\b/i.test(String(res.getHeader('cache-control') ?? ''))) return false
  const vary = res.getHeader('vary')
  if (vary === undefined) return true
  return String(vary).split(',').every((name) => name.trim().toLowerCase() === 'accept-encoding')
}

// What a row's bounds count it under (rows.js): the file a body is or
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

module.exports = { nativeLane, laneLoaded }
