'use strict'

// The client side of the soak over HTTP/2 (bench/soak.js --http2): one session
// (TLS, ALPN h2, on a TCP socket of its own) that sends batches of 1-4
// concurrent streams with the requests of the HTTP/1.1 client (Connection.drawRequests) and
// checks every response: status, Content-Length, Content-Range, and every body
// byte. At random points it cuts: RST_STREAM on one stream mid-body, or GOAWAY
// and close of the whole session mid-body; or stops reading a stream for a
// while (slow reader: the server's stream flow control fills). No TCP-level cut
// under a live session: destroying the TLS or TCP socket beneath a Node 20
// http2 client session with streams in flight crashed this (client) process
// with heap corruption ("corrupted size vs. prev_size"), every run. The same
// interface as Connection (client.js) for bench/soak.js: run(), batch, paused,
// lastProgress, stalled(), socket and raw (destroy()): it extends Connection,
// whose constructor, run loop, hang-up and verification it shares, with the
// session standing for both the socket and the raw socket.

const http2 = require('node:http2')
const net = require('node:net')
const tls = require('node:tls')
const { Connection, checkHead, sample, track } = require('./client')

const RESET_RATE = 0.12
const SLOW_RATE = 0.08
const SLOW_MS = [200, 2000]
const { NGHTTP2_CANCEL } = http2.constants

// An HTTP/1.1 request text → the HTTP/2 request headers.
function h2Headers (text) {
  const [requestLine, ...lines] = text.split('\r\n').filter(Boolean)
  const [method, path] = requestLine.split(' ')
  const headers = { ':method': method, ':path': path }
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    if (name !== 'host') headers[name] = line.slice(colon + 1).trim()
  }
  return headers
}

class H2Connection extends Connection {
  // GOAWAY; the session closes once its streams are done.
  closeGently (session) {
    session.close()
  }

  forceClose (session) {
    session.destroy()
  }

  // The session runs over a TLS socket on a TCP socket of this client's own
  // (createConnection), so that the load can tell when the connection is really
  // gone (a destroyed session's socket may still be flushing, or waiting for the
  // server's FIN after a GOAWAY) and cut it. Cut at the load's end: a session
  // still connecting has no stream, its sockets are destroyed; a connected one is
  // destroyed (never the socket beneath a session with streams in flight: see
  // above), its sockets only if still open a while later.
  connect () {
    const { ctx } = this
    return new Promise((resolve) => {
      const raw = net.connect({ port: ctx.port, host: '127.0.0.1' })
      const socket = tls.connect({ socket: raw, ALPNProtocols: ['h2'], rejectUnauthorized: false })
      const session = http2.connect(`https://127.0.0.1:${ctx.port}`, { createConnection: () => socket })
      track(ctx, socket, raw, (destroySockets) => session.connecting ? destroySockets() : session.destroy())
      let settled = false
      session.on('error', (err) => {
        this.lastError = err
        if (settled) return
        settled = true
        ctx.stats.connectErrors++
        session.destroy()
        resolve(false)
      })
      // Cut by the load's end while connecting (no error): no session.
      session.once('close', () => {
        if (settled) return
        settled = true
        resolve(false)
      })
      session.once('connect', () => {
        if (settled) return
        settled = true
        ctx.stats.connections++
        this.socket = session
        this.raw = session
        session.on('close', () => this.onClose(session))
        resolve(true)
      })
    })
  }

  sendBatch () {
    const { ctx } = this
    const { rng, stats } = ctx
    const requests = this.drawRequests()
    const n = requests.length
    const batch = { requests, left: n, streams: [], reset: null, done: null }
    if (rng() < (ctx.resetRate ?? RESET_RATE)) {
      const k = rng.int(n)
      batch.reset = { k, at: rng.int(Math.max(1, requests[k].body)), how: rng() < 0.6 ? 'rstStream' : 'goaway' }
    }
    const slow = rng() < (ctx.slowRate ?? SLOW_RATE) ? { k: rng.int(n), ms: rng.between(...SLOW_MS) } : null
    this.batch = batch
    this.lastProgress = Date.now()
    const promise = new Promise((resolve) => { batch.done = resolve })
    for (const request of requests) stats.byKind[request.kind] = (stats.byKind[request.kind] || 0) + 1
    stats.requests += n
    const session = this.socket
    requests.forEach((request, k) => {
      const state = { request, received: 0, head: null, over: false }
      let stream
      try {
        stream = session.request(h2Headers(request.text), { endStream: true })
      } catch (err) {
        this.lastError = err
        return this.streamOver(batch, state)
      }
      batch.streams.push({ stream, state })
      stream.on('error', (err) => { this.lastError = err })
      stream.on('response', (headers) => {
        this.lastProgress = Date.now()
        const head = { status: headers[':status'], statusLine: `:status ${headers[':status']}`, headers }
        const problem = checkHead(request, head)
        if (problem !== null) return this.wrong(batch, state, stream, problem)
        state.head = head
        if (headers.etag !== undefined && request.index >= 0 && request.expect.status !== 304) ctx.etags.set(request.index, headers.etag)
        if (this.atReset(batch, k, state, stream)) return
        if (slow !== null && slow.k === k) this.slowDown(stream, slow.ms)
      })
      stream.on('data', (chunk) => {
        if (state.over) return
        this.lastProgress = Date.now()
        let take = Math.min(chunk.length, request.body - state.received)
        const plan = batch.reset
        const cut = plan !== null && plan.k === k && plan.at < state.received + take
        if (cut) take = plan.at - state.received
        this.verify(request, state.received, chunk.subarray(0, take))
        state.received += take
        if (cut) return this.cut(batch, state, stream)
        if (chunk.length > take) this.wrong(batch, state, stream, `${chunk.length - take} bytes past the body`)
      })
      stream.on('end', () => {
        if (state.over) return
        if (state.head === null || state.received !== request.body) return this.wrong(batch, state, stream, `the stream ended after ${state.received} of ${request.body} body bytes${state.head ? '' : ' (no head)'}`)
        stats.responses++
        stats.byStatus[request.expect.status] = (stats.byStatus[request.expect.status] || 0) + 1
        if (request.body > 0) stats.bodies++
        this.streamOver(batch, state)
      })
      stream.on('close', () => {
        if (state.over) return
        // Closed by the server (RST_STREAM, GOAWAY, the connection) before its end.
        this.dropped(batch, state, stream.rstCode)
      })
    })
    return promise
  }

  streamOver (batch, state) {
    if (state.over) return
    state.over = true
    batch.left--
    if (batch.left === 0) this.finishBatch(batch)
  }

  atReset (batch, k, state, stream) {
    const plan = batch.reset
    if (plan === null || plan.k !== k || plan.at !== 0) return false
    this.cut(batch, state, stream)
    return true
  }

  // The planned cut: this stream (RST_STREAM), or the whole session (GOAWAY, or a
  // TCP RST), abandoning the other streams of the batch.
  cut (batch, state, stream) {
    const { stats } = this.ctx
    const plan = batch.reset
    batch.reset = null
    stats.resets++
    stats.resetsByMethod[plan.how] = (stats.resetsByMethod[plan.how] || 0) + 1
    stats.cutResponses++
    if (plan.how === 'rstStream') {
      this.streamOver(batch, state)
      stream.close(NGHTTP2_CANCEL)
      return
    }
    const session = this.socket
    this.socket = null
    for (const other of batch.streams) {
      if (!other.state.over && other.state !== state) stats.abandonedResponses++
      other.state.over = true
    }
    session.destroy(null, NGHTTP2_CANCEL) // GOAWAY, then the connection closes
    this.finishBatch(batch)
  }

  slowDown (stream, ms) {
    const { stats } = this.ctx
    stats.slowPauses++
    stats.slowMs += ms
    this.paused = true
    stream.pause()
    setTimeout(() => {
      this.paused = false
      this.lastProgress = Date.now()
      stream.resume()
    }, ms)
  }

  wrong (batch, state, stream, what) {
    const { stats } = this.ctx
    stats.wrongResponses++
    sample(stats, { kind: state.request.kind, request: state.request.text.split('\r\n').filter(Boolean), problem: what })
    this.streamOver(batch, state)
    stream.close(NGHTTP2_CANCEL)
  }

  dropped (batch, state, code) {
    const { stats } = this.ctx
    stats.unexpectedCloses++
    const name = code ? `RST_STREAM ${code}` : (this.lastError && this.lastError.code) || 'closed'
    stats.unexpectedCloseCodes[name] = (stats.unexpectedCloseCodes[name] || 0) + 1
    sample(stats, { problem: `the server closed the stream (${name}) after ${state.received} of ${state.request.body} body bytes${state.head ? '' : ' (before the head)'}`, request: state.request.text.split('\r\n').filter(Boolean) })
    this.streamOver(batch, state)
  }

  onClose (session) {
    if (this.socket !== session) return // cut by the client
    this.socket = null
    if (this.batch === null) this.ctx.stats.idleCloses++
    // streams still open are counted by their 'close'
  }

  stalled () {
    const { stats } = this.ctx
    const batch = this.batch
    if (batch === null || this.socket === null) return
    stats.stalls++
    const open = batch.streams.find((s) => !s.state.over)
    sample(stats, { problem: `no byte for ${Date.now() - this.lastProgress} ms`, request: open ? open.state.request.text.split('\r\n').filter(Boolean) : null })
    const session = this.socket
    this.socket = null
    for (const s of batch.streams) s.state.over = true
    session.destroy()
    this.finishBatch(batch)
  }
}

module.exports = { H2Connection }
