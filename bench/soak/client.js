'use strict'

// The client side of the soak: one keep-alive connection (a raw net socket, TLS on
// top of it with --tls) that sends pipelined batches of 1-4 requests, parses the
// HTTP/1.1 responses itself and checks every one: status, Content-Length,
// Content-Range, and every body byte that arrives against the file's bytes. At
// random points it resets the connection (destroy, or RST with resetAndDestroy),
// mid-body and while later pipelined responses are queued, or stops reading for a
// while (a slow reader: the server's writes hit EAGAIN).

const net = require('node:net')
const tls = require('node:tls')

// Per batch: how often the connection is cut, how often the reader stalls.
const RESET_RATE = 0.12
const SLOW_RATE = 0.08
const SLOW_MS = [200, 2000]
const MAX_HEAD = 16 * 1024

// A small seedable PRNG (mulberry32), so a run can be repeated with --seed.
function random (seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  next.int = (n) => Math.floor(next() * n) // 0 .. n-1
  next.between = (lo, hi) => lo + next.int(hi - lo + 1) // lo .. hi
  return next
}

function newStats () {
  return {
    requests: 0,
    responses: 0, // complete and checked
    bodies: 0, // complete responses with a body, every byte verified
    byStatus: {},
    byKind: {},
    bytesVerified: 0,
    wrongBytes: 0,
    wrongResponses: 0,
    samples: [], // the first few wrong responses or bytes, for the report
    resets: 0,
    resetsByMethod: { destroy: 0, resetAndDestroy: 0 },
    resetsIdle: 0, // between batches
    cutResponses: 0, // a response the client reset midway
    abandonedResponses: 0, // responses still queued behind the cut
    slowPauses: 0,
    slowMs: 0,
    unexpectedCloses: 0, // the server closed with responses outstanding
    unexpectedCloseCodes: {},
    idleCloses: 0,
    stalls: 0, // no byte for the stall timeout while a response was due
    connectErrors: 0,
    connections: 0
  }
}

function sample (stats, what) {
  if (stats.samples.length < 10) stats.samples.push(what)
}

// A request and what its answer must be. `length`: Content-Length (null: not
// checked, 304); `body`: bytes to read; `contentRange`: the header or undefined.
function makeRequest (rng, files, etags) {
  const index = rng.int(files.length)
  const { url, size } = files[index]
  const whole = { status: 200, start: 0, length: size, contentRange: undefined }
  const part = (start, end) => ({ status: 206, start, length: end - start + 1, contentRange: `bytes ${start}-${end}/${size}` })
  let method = 'GET'
  let headers = ''
  let expect
  let kind = rng()
  if (kind < 0.28) {
    kind = 'get'
    expect = whole
  } else if (kind < 0.36) {
    kind = 'head'
    method = 'HEAD'
    expect = whole
  } else if (kind < 0.54) {
    kind = 'range' // bytes=a-b, b sometimes past the end (clamped)
    const start = rng.int(size)
    const end = rng() < 0.1 ? size + rng.int(1000) : rng.between(start, size - 1)
    headers = `Range: bytes=${start}-${end}\r\n`
    expect = part(start, Math.min(end, size - 1))
  } else if (kind < 0.63) {
    kind = 'open-ended'
    const start = rng.int(size)
    headers = `Range: bytes=${start}-\r\n`
    expect = part(start, size - 1)
  } else if (kind < 0.72) {
    kind = 'suffix'
    const n = rng.between(1, size)
    headers = `Range: bytes=-${n}\r\n`
    expect = part(size - n, size - 1)
  } else if (kind < 0.78) {
    kind = 'unsatisfiable'
    const start = size + rng.int(3)
    headers = `Range: bytes=${start}-${rng() < 0.5 ? '' : start + rng.int(100)}\r\n`
    expect = { status: 416, start: 0, length: 0, contentRange: `bytes */${size}` }
  } else if (kind < 0.81 && size >= 4) {
    kind = 'multi-range' // two disjoint ranges: the whole file (no multipart)
    const a = rng.int(size - 3)
    const c = rng.between(a + 2, size - 1)
    headers = `Range: bytes=${a}-${a},${c}-${c}\r\n`
    expect = whole
  } else if (kind < 0.84) {
    kind = 'head-range'
    method = 'HEAD'
    const start = rng.int(size)
    headers = `Range: bytes=${start}-\r\n`
    expect = part(start, size - 1)
  } else if (kind < 0.96) {
    const etag = etags.get(index)
    if (etag === undefined) {
      kind = 'get'
      expect = whole
    } else if (rng() < 0.8) {
      kind = 'not-modified'
      headers = `If-None-Match: ${etag}\r\n`
      expect = { status: 304, start: 0, length: null, contentRange: undefined }
    } else {
      kind = 'modified' // an ETag that does not match: the whole file
      headers = 'If-None-Match: "nope"\r\n'
      expect = whole
    }
  } else {
    kind = 'missing'
    return {
      kind,
      text: `GET /missing-${rng.int(1e9)}.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      index: -1,
      expect: { status: 404, start: 0, length: 0, contentRange: undefined },
      body: 0
    }
  }
  const body = method === 'HEAD' || expect.status === 304 ? 0 : expect.length
  return { kind, text: `${method} ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`, index, expect, body }
}

function parseHead (buffer) {
  const lines = buffer.toString('latin1').split('\r\n')
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0])
  const headers = {}
  for (const line of lines.slice(1)) {
    if (line === '') continue
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: status ? Number(status[1]) : null, statusLine: lines[0], headers }
}

// What is wrong with a response head, or null.
function checkHead (request, head) {
  const { expect } = request
  if (head.status !== expect.status) return `status ${head.status} (${head.statusLine}), expected ${expect.status}`
  if (head.headers['transfer-encoding'] !== undefined) return `Transfer-Encoding: ${head.headers['transfer-encoding']}`
  if (expect.length !== null && head.headers['content-length'] !== String(expect.length)) {
    return `Content-Length ${head.headers['content-length']}, expected ${expect.length}`
  }
  if (expect.status === 304 && head.headers['content-length'] !== undefined && head.headers['content-length'] !== '0') {
    // a 304 has no body whatever it says; allowed, as long as nothing follows
  }
  if (head.headers['content-range'] !== expect.contentRange) {
    return `Content-Range ${head.headers['content-range']}, expected ${expect.contentRange}`
  }
  return null
}

// Compares body bytes that arrived, `at` bytes into the body of `request`, with
// the file's; counts and samples what differs.
function verifyBytes ({ stats, files }, request, at, bytes) {
  const { content } = files[request.index]
  const start = request.expect.start + at
  const expected = content.subarray(start, start + bytes.length)
  stats.bytesVerified += bytes.length
  if (expected.length === bytes.length && bytes.equals(expected)) return
  let wrong = Math.abs(bytes.length - expected.length)
  let first = -1
  for (let i = 0; i < Math.min(bytes.length, expected.length); i++) {
    if (bytes[i] !== expected[i]) {
      wrong++
      if (first < 0) first = i
    }
  }
  stats.wrongBytes += wrong
  sample(stats, { problem: `${wrong} wrong bytes of ${bytes.length}, first at file offset ${start + Math.max(first, 0)}`, request: request.text.split('\r\n').filter(Boolean) })
}

// Registers a transport a connection opened (`socket` over `raw`, its TCP
// socket; the same for plain HTTP) with the load (ctx.transports), from its
// creation, connect still pending, until `raw` closed: when the load ends,
// whatever is still open is cut and waited for, so that the server is judged
// only once its clients hold nothing. `cut(destroy)` cuts it the transport's own
// way (default: `destroy`, which destroys both sockets); `destroy` follows if
// that was not enough.
function track (ctx, socket, raw, cut = (destroy) => destroy()) {
  const transports = ctx.transports
  if (transports === undefined) return
  const destroy = () => { socket.destroy(); raw.destroy() }
  const entry = { cut: () => cut(destroy), destroy, open: true, closed: null }
  entry.closed = new Promise((resolve) => raw.once('close', () => {
    entry.open = false
    transports.delete(entry)
    resolve()
  }))
  transports.add(entry)
}

class Connection {
  // ctx: { port, tls, files, etags, stats, rng, stopping(), transports?, resetRate?, slowRate? }
  constructor (ctx, id) {
    this.ctx = ctx
    this.id = id
    this.socket = null // what is read and written (TLS or raw)
    this.raw = null // the TCP socket (resetAndDestroy)
    this.batch = null
    this.lastProgress = Date.now()
    this.paused = false
  }

  async run () {
    const { ctx } = this
    while (!ctx.stopping()) {
      if (this.socket === null && !(await this.connect())) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        continue
      }
      // A connect that completed after the load's end sends no batch: it hangs up.
      if (ctx.stopping()) break
      await this.sendBatch()
    }
    await this.hangUp()
  }

  // Closes an idle connection the polite way, or by force after 3 s.
  hangUp () {
    const socket = this.socket
    if (socket === null) return
    this.socket = null
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.forceClose(socket), 3000)
      socket.once('close', () => { clearTimeout(timer); resolve() })
      this.closeGently(socket)
    })
  }

  // FIN; the server closes its side.
  closeGently (socket) {
    socket.end()
  }

  forceClose (socket) {
    socket.destroy()
    this.raw.destroy()
  }

  connect () {
    const { ctx } = this
    return new Promise((resolve) => {
      const raw = net.connect({ port: ctx.port, host: '127.0.0.1' })
      const socket = ctx.tls ? tls.connect({ socket: raw, rejectUnauthorized: false }) : raw
      track(ctx, socket, raw)
      let settled = false
      const onError = () => {
        if (settled) return
        settled = true
        ctx.stats.connectErrors++
        raw.destroy()
        socket.destroy()
        resolve(false)
      }
      // Cut by the load's end while connecting (no error): no connection.
      const onClose = () => {
        if (settled) return
        settled = true
        resolve(false)
      }
      socket.on('error', onError)
      raw.on('error', onError)
      raw.once('close', onClose)
      socket.once(ctx.tls ? 'secureConnect' : 'connect', () => {
        if (settled) return
        settled = true
        socket.off('error', onError)
        raw.off('error', onError)
        raw.off('close', onClose)
        raw.setNoDelay(true)
        ctx.stats.connections++
        this.socket = socket
        this.raw = raw
        this.head = null
        this.headBuffer = null
        socket.on('error', (err) => { this.lastError = err })
        raw.on('error', () => {})
        socket.on('data', (chunk) => this.onData(socket, chunk))
        socket.on('close', () => this.onClose(socket))
        resolve(true)
      })
    })
  }

  // The next batch's requests: one to four, drawn from the context's files.
  drawRequests () {
    const { rng, files, etags } = this.ctx
    const n = rng.between(1, 4)
    const requests = []
    for (let i = 0; i < n; i++) requests.push(makeRequest(rng, files, etags))
    return requests
  }

  sendBatch () {
    const { ctx } = this
    const { rng, stats } = ctx
    const requests = this.drawRequests()
    const n = requests.length
    const batch = { requests, index: 0, received: 0, reset: null, slow: null, done: null }
    if (rng() < (ctx.resetRate ?? RESET_RATE)) {
      const k = rng.between(-1, n - 1)
      batch.reset = k < 0 ? { k, delay: rng.int(4) } : { k, at: rng.int(Math.max(1, requests[k].body)) }
    }
    if (rng() < (ctx.slowRate ?? SLOW_RATE)) {
      const k = rng.int(n)
      batch.slow = { k, at: rng.int(Math.max(1, requests[k].body)), ms: rng.between(...SLOW_MS), done: false }
    }
    this.batch = batch
    this.head = null
    this.headBuffer = null
    this.lastProgress = Date.now()
    const promise = new Promise((resolve) => { batch.done = resolve })
    const socket = this.socket
    for (const request of requests) stats.byKind[request.kind] = (stats.byKind[request.kind] || 0) + 1
    stats.requests += n
    if (n > 1 && rng() < 0.3) {
      // the first request now, the rest a little later, one by one
      socket.write(requests[0].text)
      let i = 1
      const more = () => {
        if (this.socket !== socket || this.batch !== batch) return
        socket.write(requests[i++].text)
        if (i < n) setTimeout(more, rng.int(5))
      }
      setTimeout(more, rng.int(5))
    } else {
      socket.write(requests.map((r) => r.text).join(''))
    }
    if (batch.reset !== null && batch.reset.k < 0) {
      // right after sending: before or during the first response, or (when the
      // batch was fast) on the idle connection or during the next batch
      setTimeout(() => {
        if (this.socket === socket) this.reset(this.batch) // this batch, a later one, or none
      }, batch.reset.delay)
    }
    return promise
  }

  // Cuts the connection. Whatever response was under way is cut, the ones queued
  // behind it abandoned.
  reset (batch) {
    const { stats, rng } = this.ctx
    const socket = this.socket
    const raw = this.raw
    this.socket = null
    stats.resets++
    if (rng() < 0.5) {
      stats.resetsByMethod.destroy++
      socket.destroy()
      raw.destroy()
    } else {
      stats.resetsByMethod.resetAndDestroy++
      raw.resetAndDestroy()
      socket.destroy()
    }
    if (batch === null) {
      stats.resetsIdle++
      return
    }
    const outstanding = batch.requests.length - batch.index
    if (outstanding > 0) {
      const started = this.head !== null || batch.received > 0
      stats.cutResponses += started ? 1 : 0
      stats.abandonedResponses += outstanding - (started ? 1 : 0)
    }
    this.finishBatch(batch)
  }

  finishBatch (batch) {
    if (this.batch === batch) this.batch = null
    this.paused = false
    batch.done()
  }

  // The response is wrong: counted, and the connection dropped (its framing can no
  // longer be trusted).
  wrong (batch, request, what) {
    const { stats } = this.ctx
    stats.wrongResponses++
    sample(stats, { kind: request.kind, request: request.text.split('\r\n').filter(Boolean), problem: what })
    const socket = this.socket
    this.socket = null
    socket.destroy()
    this.raw.destroy()
    this.finishBatch(batch)
  }

  onClose (socket) {
    if (this.socket !== socket) return // cut by the client
    this.socket = null
    const { stats } = this.ctx
    const batch = this.batch
    if (batch === null) {
      stats.idleCloses++
      return
    }
    stats.unexpectedCloses++
    const code = (this.lastError && this.lastError.code) || 'closed'
    stats.unexpectedCloseCodes[code] = (stats.unexpectedCloseCodes[code] || 0) + 1
    const request = batch.requests[batch.index]
    sample(stats, { problem: `the server closed the connection (${code}) after ${batch.received} of ${request.body} body bytes${this.head ? '' : ' (before the head)'}, response ${batch.index + 1} of ${batch.requests.length}`, request: request.text.split('\r\n').filter(Boolean) })
    this.raw.destroy()
    this.finishBatch(batch)
  }

  // Called with a timeout: no byte for too long while a response is due.
  stalled () {
    const { stats } = this.ctx
    const batch = this.batch
    if (batch === null || this.socket === null) return
    stats.stalls++
    sample(stats, { problem: `no byte for ${Date.now() - this.lastProgress} ms`, request: batch.requests[batch.index].text.split('\r\n').filter(Boolean), received: batch.received })
    const socket = this.socket
    this.socket = null
    socket.destroy()
    this.raw.destroy()
    this.finishBatch(batch)
  }

  onData (socket, chunk) {
    if (this.socket !== socket) return
    this.lastProgress = Date.now()
    const batch = this.batch
    const { stats } = this.ctx
    let offset = 0
    while (offset < chunk.length) {
      if (batch === null || batch.index >= batch.requests.length || this.socket !== socket) {
        if (this.socket === socket) {
          stats.wrongResponses++
          sample(stats, { problem: `${chunk.length - offset} bytes after the last response: ${JSON.stringify(chunk.subarray(offset, offset + 80).toString('latin1'))}` })
          this.socket = null
          socket.destroy()
          this.raw.destroy()
          if (batch !== null && this.batch === batch) this.finishBatch(batch)
        }
        return
      }
      const request = batch.requests[batch.index]
      if (this.head === null) {
        const pending = this.headBuffer ? Buffer.concat([this.headBuffer, chunk.subarray(offset)]) : chunk.subarray(offset)
        const end = pending.indexOf('\r\n\r\n')
        if (end === -1) {
          if (pending.length > MAX_HEAD) return this.wrong(batch, request, 'response head too long')
          this.headBuffer = Buffer.from(pending)
          return
        }
        offset += end + 4 - (this.headBuffer ? this.headBuffer.length : 0)
        this.headBuffer = null
        this.head = parseHead(pending.subarray(0, end))
        const problem = checkHead(request, this.head)
        if (problem !== null) return this.wrong(batch, request, problem)
        const etag = this.head.headers.etag
        if (etag !== undefined && request.index >= 0 && request.expect.status !== 304) this.ctx.etags.set(request.index, etag)
        batch.received = 0
        if (this.atReset(batch)) return
        this.atSlow(batch, socket)
      } else {
        let take = Math.min(chunk.length - offset, request.body - batch.received)
        const cut = batch.reset !== null && batch.reset.k === batch.index && batch.reset.at < batch.received + take
        if (cut) take = batch.reset.at - batch.received
        this.verify(request, batch.received, chunk.subarray(offset, offset + take))
        batch.received += take
        offset += take
        if (cut) return this.reset(batch)
        this.atSlow(batch, socket)
      }
      if (batch.received === request.body) {
        stats.responses++
        stats.byStatus[request.expect.status] = (stats.byStatus[request.expect.status] || 0) + 1
        if (request.body > 0) stats.bodies++
        this.head = null
        batch.received = 0
        batch.index++
        if (batch.index === batch.requests.length) {
          this.finishBatch(batch)
          if (offset < chunk.length) continue // reported as bytes after the last response
          return
        }
      }
    }
  }

  atReset (batch) {
    const plan = batch.reset
    if (plan === null || plan.k !== batch.index || plan.at !== batch.received) return false
    this.reset(batch)
    return true
  }

  atSlow (batch, socket) {
    const plan = batch.slow
    if (plan === null || plan.done || plan.k !== batch.index || batch.received < plan.at) return
    plan.done = true
    const { stats } = this.ctx
    stats.slowPauses++
    stats.slowMs += plan.ms
    this.paused = true
    socket.pause()
    setTimeout(() => {
      this.paused = false
      this.lastProgress = Date.now()
      if (this.socket === socket) socket.resume()
    }, plan.ms)
  }

  verify (request, at, bytes) {
    verifyBytes(this.ctx, request, at, bytes)
  }
}

module.exports = { Connection, random, newStats, checkHead, sample, verifyBytes, track }
