// Requests with a body behind zcopy.nativeLane (issue 62 item 3): the lane
// frames them (src/request_frame.cc) and lends each to the server with its
// body (Content-Length or chunked), read as it comes and only as fast as the
// server takes it, then reads the connection's next request once the answer
// is written; a body the server did not read is dropped, as Node drops it. Before, any request with
// a body handed the connection to Node for good, and a client that sent one
// (even `Content-Length: 0`) before pipelining more got Node's parse of the
// whole read again. Real node:http and Express servers in this process, raw
// sockets and fetch as clients.
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { nativeLane, sendFile, serveStatic, zeroCopyAvailable } from '../../lib/index.js'
import { exchange as rawExchange } from '../support/raw-exchange.mjs'

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex')
const MiB = 2 ** 20
let root
// Bigger than what loopback buffers take: a client that reads nothing stalls it.
const big = Buffer.alloc(32 * MiB, 'b')

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-lane-bodies-'))
  fs.writeFileSync(path.join(root, 'big.bin'), big)
  fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\n')
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// A node:http server (or Express app) behind a lane: `handle(req, res)`
// answers /echo (the body's length and hash, read in full), /slow (reads
// only once `release()` is called), /ignore (answers at once, reads nothing),
// /file (big.bin by sendFile at once, the body read as it comes), /bytes (the
// same from memory) and the rest from serveStatic. `seen` lists each request the app saw.
async function start ({ framework = 'http', serverOptions = {} } = {}) {
  const seen = []
  let release
  const released = new Promise((resolve) => { release = resolve })
  const serve = serveStatic(root)
  const echo = (req, res) => {
    const hash = createHash('sha256')
    let length = 0
    req.on('data', (chunk) => { length += chunk.length; hash.update(chunk) })
    req.on('end', () => res.end(`${req.method} ${length} ${hash.digest('hex')}\n`))
  }
  const routes = (req, res, next) => {
    seen.push(`${req.method} ${req.url}`)
    const pathname = req.url.replace(/^http:\/\/[^/]+/, '') // (an absolute-form target too)
    if (pathname === '/echo') return echo(req, res)
    if (pathname === '/slow') return released.then(() => echo(req, res))
    if (pathname === '/ignore') return res.end('ignored\n')
    if (pathname === '/file') {
      req.resume()
      return sendFile(req, res, 'big.bin', { root }).catch(next)
    }
    if (pathname === '/bytes') {
      req.resume()
      return res.end(big)
    }
    serve(req, res, next)
  }
  let handler
  if (framework === 'express') {
    const app = express()
    app.use(routes)
    app.use((req, res) => res.status(404).end('not here\n'))
    handler = app
  } else {
    handler = (req, res) => routes(req, res, () => { res.statusCode = 404; res.end('not here\n') })
  }
  const server = http.createServer(serverOptions, handler)
  const lane = nativeLane(server)
  const { port } = await lane.listen(0, '127.0.0.1')
  return {
    port,
    seen,
    release,
    server,
    lane,
    async stop () {
      await lane.close(1000)
      await serve.close()
    }
  }
}

// A fresh connection to talk on: → { socket, text() (what came so far, as
// latin1), until(done) (resolves once done(text) holds) }.
async function talk (port) {
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1').on('data', (chunk) => { received += chunk })
  socket.on('error', () => {})
  await once(socket, 'connect')
  return {
    socket,
    text: () => received,
    async until (done) {
      while (!done(received)) await once(socket, 'data')
    }
  }
}

// Writes `bytes` on a fresh connection and collects everything until the
// server closes it (→ latin1 string).
async function exchange (port, bytes) {
  return (await rawExchange(port, [bytes])).bytes.toString('latin1')
}

// The status lines and bodies of the answers in `text` (each with a
// Content-Length, as these servers answer; no HEAD is asked here).
function answers (text) {
  const out = []
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\r\n\r\n', at)
    if (end < 0) break
    const head = text.slice(at, end)
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
    out.push({ status: head.split('\r\n')[0], body: text.slice(end + 4, end + 4 + length) })
    at = end + 4 + length
  }
  return out
}

const REQ = (method, target, body = null, extra = '') =>
  `${method} ${target} HTTP/1.1\r\nHost: a\r\n${body === null ? '' : `Content-Length: ${Buffer.byteLength(body, 'latin1')}\r\n`}${extra}\r\n${body ?? ''}`

describe.runIf(zeroCopyAvailable).each(['http', 'express'])('%s behind the lane', (framework) => {
  let app
  beforeAll(async () => { app = await start({ framework }) })
  afterAll(() => app?.stop())

  test('bodies of every size reach the app byte for byte, on one keep-alive connection', async () => {
    for (const size of [0, 1, 1000, 64 * 1024 + 3, 5 * MiB]) {
      const body = randomBytes(size)
      const res = await fetch(`http://127.0.0.1:${app.port}/echo`, { method: size % 2 ? 'PUT' : 'POST', body })
      expect(await res.text()).toBe(`${size % 2 ? 'PUT' : 'POST'} ${size} ${sha(body)}\n`)
    }
  })

  test('pipelined requests with and without bodies, in one write: every answer, in order', async () => {
    const received = await exchange(app.port, Buffer.from(
      REQ('POST', '/echo', 'hello') + REQ('GET', '/a.txt') + REQ('DELETE', '/echo', '') + REQ('PATCH', '/echo', 'xy') +
      REQ('GET', '/a.txt', '') + REQ('POST', '/ignore', 'never read') + REQ('GET', '/a.txt', null, 'Connection: close\r\n'), 'latin1'))
    expect(answers(received).map(({ status, body }) => `${status.slice(9)} ${body.split(' ').slice(0, 2).join(' ').trim()}`)).toEqual([
      '200 OK POST 5', '200 OK alpha', '200 OK DELETE 0', '200 OK PATCH 2', '200 OK alpha', '200 OK ignored', '200 OK alpha'
    ])
  })

  test('a body the app does not read is dropped, and the connection goes on', async () => {
    const big = 'z'.repeat(3 * MiB)
    const received = await exchange(app.port, Buffer.from(REQ('PUT', '/ignore', big) + REQ('GET', '/a.txt', null, 'Connection: close\r\n'), 'latin1'))
    expect(answers(received).map(({ body }) => body)).toEqual(['ignored\n', 'alpha\n'])
  })

  test('chunked bodies, in one write with what follows or as they come: every answer, in order', async () => {
    const chunked = (target, body, extra = '') => `POST ${target} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n${extra}\r\n${body}`
    const received = await exchange(app.port, chunked('/echo', '5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n') + REQ('GET', '/a.txt') +
      chunked('/ignore', '3\r\nabc\r\n0\r\n\r\n') + chunked('/echo', '2;ext=1\r\nhi\r\n0\r\n\r\n', 'Connection: close\r\n'))
    expect(answers(received).map(({ body }) => body)).toEqual([`POST 5 ${sha(Buffer.from('hello'))}\n`, 'alpha\n', 'ignored\n', `POST 2 ${sha(Buffer.from('hi'))}\n`])
    // A big chunked upload, sent as a stream: fetch frames it in chunks.
    const payload = randomBytes(3 * MiB)
    const res = await fetch(`http://127.0.0.1:${app.port}/echo`, {
      method: 'POST',
      duplex: 'half',
      body: new ReadableStream({
        start (controller) {
          for (let at = 0; at < payload.length; at += 100_000) controller.enqueue(payload.subarray(at, at + 100_000))
          controller.close()
        }
      })
    })
    expect(await res.text()).toBe(`POST ${payload.length} ${sha(payload)}\n`)
  })
})

describe.runIf(zeroCopyAvailable)('the lane reads a body only as fast as the app takes it', () => {
  test('an app that reads nothing yet: the client backs up, nothing is lost', async () => {
    const app = await start()
    const { socket, text, until } = await talk(app.port)
    try {
      const body = randomBytes(64 * MiB)
      socket.write(`POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
      socket.write(body)
      // The lane stops reading once the twin is full: the rest waits in the
      // client's socket, not in the server (before: all of it read).
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(socket.writableLength).toBeGreaterThan(16 * MiB)
      app.release()
      await until((received) => received.endsWith('\n'))
      expect(text()).toMatch(new RegExp(`\r\n\r\nPOST ${body.length} ${sha(body)}\n$`))
    } finally {
      socket.destroy()
      await app.stop()
    }
  })

  test('a client gone mid-body: the app hears it, the lane goes on', async () => {
    const app = await start()
    try {
      const socket = net.connect(app.port, '127.0.0.1')
      await once(socket, 'connect')
      socket.write('POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n' + 'x'.repeat(5000))
      await new Promise((resolve) => setTimeout(resolve, 100))
      socket.destroy()
      const res = await fetch(`http://127.0.0.1:${app.port}/a.txt`)
      expect(await res.text()).toBe('alpha\n')
      expect(app.seen).toEqual(['POST /echo', 'GET /a.txt'])
    } finally {
      await app.stop()
    }
  })
})

// An answer that waits for room while its request's body still comes: the
// body's end, read meanwhile, must not take the lane's watch for room away,
// nor let the request behind it be answered before the answer ahead is out.
describe.runIf(zeroCopyAvailable)('a body that ends while the answer waits for room', () => {
  test.each([
    ['http', '/file'], ['express', '/file'], ['http', '/bytes'], ['express', '/bytes']
  ])('%s, %s: the answer goes on once the client reads, then the request behind it', async (framework, target) => {
    const app = await start({ framework })
    const { socket, text, until } = await talk(app.port)
    try {
      const rest = 256 * 1024
      socket.write(`POST ${target} HTTP/1.1\r\nHost: a\r\nContent-Length: ${1024 + rest}\r\n\r\n${'x'.repeat(1024)}`)
      await until((received) => received.length > 0)
      socket.pause() // the 32 MiB answer waits for room
      await sleep(300)
      socket.write('y'.repeat(rest) + REQ('GET', '/a.txt')) // the body's end, and a request behind it
      await sleep(300)
      socket.resume()
      const done = until((received) => received.endsWith('alpha\n')).then(() => 'done')
      expect(await Promise.race([done, sleep(20_000).then(() => 'stalled')])).toBe('done')
      const [file, next] = answers(text())
      expect(file.status).toBe('HTTP/1.1 200 OK')
      expect(file.body.length).toBe(big.length)
      expect(file.body === big.toString('latin1')).toBe(true)
      expect(next).toEqual({ status: 'HTTP/1.1 200 OK', body: 'alpha\n' })
      expect(app.seen).toEqual([`POST ${target}`, 'GET /a.txt'])
    } finally {
      socket.destroy()
      await app.stop()
    }
  })
})

describe.runIf(zeroCopyAvailable)('Expect: 100-continue', () => {
  test('Node writes 100 Continue through the lane, then the body comes and is read', async () => {
    const app = await start()
    try {
      const { socket, text, until } = await talk(app.port)
      socket.write('PUT /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n')
      await until((received) => received.includes('\r\n\r\n'))
      expect(text()).toBe('HTTP/1.1 100 Continue\r\n\r\n')
      socket.write('hello' + REQ('GET', '/a.txt', null, 'Connection: close\r\n'))
      await once(socket, 'close')
      expect(answers(text().slice('HTTP/1.1 100 Continue\r\n\r\n'.length)).map(({ body }) => body))
        .toEqual([`PUT 5 ${sha(Buffer.from('hello'))}\n`, 'alpha\n'])
    } finally {
      await app.stop()
    }
  })
})

describe.runIf(zeroCopyAvailable)('a chunked body read as it comes', () => {
  test('dropped unread, then the next request; one outside what the lane reads closes the connection', async () => {
    const app = await start()
    try {
      const { socket, text, until } = await talk(app.port)
      // Unread by the app, in pieces: dropped, then the GET behind it.
      socket.write('PUT /ignore HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab')
      await until((received) => received.includes('ignored\n'))
      socket.write('cd\r\n0\r\n\r\n' + REQ('GET', '/a.txt'))
      await until((received) => received.endsWith('alpha\n'))
      // A chunk extension once the request is lent: where the body ends is
      // not known, so the connection closes, the request unanswered.
      socket.write('POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
      await new Promise((resolve) => setTimeout(resolve, 200))
      socket.write('3;x=1\r\nabc\r\n0\r\n\r\n')
      await once(socket, 'close')
      expect(text()).not.toContain('POST ')
      expect(app.seen).toEqual(['PUT /ignore', 'GET /a.txt', 'POST /echo'])
      const res = await fetch(`http://127.0.0.1:${app.port}/a.txt`)
      expect(await res.text()).toBe('alpha\n')
    } finally {
      await app.stop()
    }
  })
})

// Node's own connection checks reach what the lane lends and hands off: the
// lane has the server emit 'listening' (Node starts them then), and its
// close() closes the server's connections as server.close() would.
describe.runIf(zeroCopyAvailable)('the server\'s timeouts and close', () => {
  test.each([
    ['lent', '/echo'],
    ['handed off (an absolute-form target the lane does not frame)', 'http://a/echo']
  ])('a body that stalls gets Node\'s 408 after requestTimeout: %s', async (_, target) => {
    const app = await start({ serverOptions: { requestTimeout: 1000, headersTimeout: 1000, connectionsCheckingInterval: 100 } })
    try {
      const started = Date.now()
      const received = await exchange(app.port, `POST ${target} HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n${'x'.repeat(10)}`)
      expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
      expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    } finally {
      await app.stop()
    }
  })

  test('lane.close() closes idle connections, lent or handed off, and the server emits \'close\'', async () => {
    const app = await start({ serverOptions: { keepAliveTimeout: 60000 } })
    const sockets = []
    try {
      for (const target of ['/echo', 'http://a/echo']) {
        const { socket, until } = await talk(app.port)
        sockets.push(socket)
        socket.write(REQ('POST', target, 'hi'))
        await until((received) => received.endsWith('\n'))
      }
      // Idle: closed at once, not cut when the minute given is over.
      const closed = once(app.server, 'close')
      const late = sleep(10_000).then(() => 'late')
      expect(await Promise.race([app.lane.close(60_000).then(() => 'closed'), late])).toBe('closed')
      await closed
      await Promise.all(sockets.map((socket) => socket.readyState === 'closed' ? null : once(socket, 'close')))
    } finally {
      for (const socket of sockets) socket.destroy()
    }
  })
})

// The attack of issue 62 item 3 with a body in front: before, the connection
// went to Node for good and its parse of the read made every request at once.
describe.runIf(zeroCopyAvailable)('a request with a body no longer opens the pipeline', () => {
  test.each([
    ['a POST with a body', REQ('POST', '/echo', 'hello')],
    ['GET with Content-Length: 0', REQ('GET', '/big.bin', '')],
    ['a DELETE', REQ('DELETE', '/ignore')],
    ['If-Match (a condition the lane does not answer)', REQ('GET', '/big.bin', null, 'If-Match: *\r\n')],
    ['a chunked POST', 'POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
    ['Expect: 100-continue with its body', REQ('POST', '/echo', 'hello', 'Expect: 100-continue\r\n')],
    ['Upgrade without Connection: upgrade', REQ('GET', '/big.bin', null, 'Upgrade: websocket\r\n')],
    ['Proxy-Connection: keep-alive', REQ('GET', '/big.bin', null, 'Proxy-Connection: keep-alive\r\n')]
  ])('%s, then 32 GETs of a big file, never read: the app sees at most two', async (_, first) => {
    const app = await start()
    const socket = net.connect(app.port, '127.0.0.1')
    try {
      socket.on('error', () => {})
      await once(socket, 'connect')
      socket.pause() // never read
      socket.write(first + REQ('GET', '/big.bin').repeat(32))
      await new Promise((resolve) => setTimeout(resolve, 1000))
      // The first request, and the first big file whose body stalls.
      expect(app.seen.length).toBeLessThanOrEqual(2)
      expect(app.seen.length).toBeGreaterThanOrEqual(1)
    } finally {
      socket.destroy()
      await app.stop()
    }
  })
})
