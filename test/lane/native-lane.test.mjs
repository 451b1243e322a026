// zcopy.nativeLane(server, options), the public API (lib/lane/native-lane.js),
// in front of an application's own node:http server: plain node:http, Express
// (`http.createServer(app)`) and Koa (`http.createServer(app.callback())`),
// with real files in a temporary folder, real loopback sockets and raw
// HTTP/1.1 written by hand, so that the bytes a client gets are the bytes
// compared. Each application counts the requests it sees in a first
// middleware: that count is how a test tells the lane's answers (the app never
// sees them) from the app's own (it sees each one).
//
// What is proved: a file serveStatic offers (`onReplayable: lane.offer`) is
// answered by the app once, then by the lane, with the same bytes but for
// Date, while the app's other routes and its 404 still reach it, in order, on
// the same keep-alive connection; an Express mount is replayed, a rewritten
// req.url is not; an answer that is not for everyone (Authorization,
// Set-Cookie, Cache-Control private or no-store, Vary beyond Accept-Encoding)
// is never replayed, while the same answer without it is; the socket a lent
// request shows the app (the lane's twin) says what a net.Socket says of the
// same connection; a request with a body reaches the app, which reads it and
// answers, and the connection keeps working, also when it was handed to the
// server for good (a head the lane does not frame; an upgrade); bad arguments
// are refused with their codes; close() is once only, refuses new
// connections, waits for answers in flight (or cuts them at its timeout) and
// leaves no descriptor open; onAnswer hears the lane's own answers and not
// the app's.
//
// The suite runs twice (`vitest run`, then `ZCOPY_NATIVE=0 vitest run`):
// without the addon there is no lane, so all but the argument checks made
// before the addon is looked for skip, and ERR_ZCOPY_NO_ADDON is checked then.
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import Koa from 'koa'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import koaServe from '../../lib/adapters/koa.js'

const require = createRequire(import.meta.url)
const { fdTable, openedSince } = require('../support/fd-table.cjs')
const { zeroCopyAvailable } = zcopy

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-native-lane-'))
const BLOB = crypto.randomBytes(200 * 1024) // every byte value: a body compared byte for byte
const BIG = crypto.randomBytes(16 * 1024 * 1024) // more than loopback's socket buffers hold
const INDEX = Buffer.from('<!doctype html><h1>the app</h1>\n')
fs.writeFileSync(path.join(root, 'blob.bin'), BLOB)
fs.writeFileSync(path.join(root, 'big.bin'), BIG)
fs.writeFileSync(path.join(root, 'index.html'), INDEX)
fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\n')
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// What a test opened, closed after it whatever happened, the last first:
// client sockets, then the lane, serveStatic and the server.
const cleanups = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()()
})

const GET = (target, extra = '') => `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`
const HEAD = (target, extra = '') => `HEAD ${target} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`
const POST = (target, body) => `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n${body}`
const CHUNKED = (target, chunks) => `POST ${target} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n` +
  chunks.map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('') + '0\r\n\r\n'

// The head of an answer with its Date value blanked (the one field a replay
// writes anew).
const withoutDate = (head) => head.replace(/\r\nDate: [^\r\n]*/, '\r\nDate: -')

// A keep-alive connection (from `localAddress` if given): write(text) sends
// latin1 bytes; answer(method) resolves with the next whole answer { head,
// status, headers, body } (the body by Content-Length; none to a HEAD, a 1xx,
// a 204 or a 304), in the order they came; it rejects once no byte came for ANSWER_MS
// (a generous bound: an answer that never comes fails, not the test's timeout).
const ANSWER_MS = 20_000
async function connection (port, { host = '127.0.0.1', localAddress } = {}) {
  const socket = net.connect({ port, host, localAddress })
  cleanups.push(() => socket.destroy())
  const chunks = []
  let length = 0
  let wake = null
  const woken = () => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no byte for ${ANSWER_MS} ms, with ${length} of an answer: ${JSON.stringify(flat().toString('latin1', 0, 300))}`)), ANSWER_MS)
    wake = () => {
      clearTimeout(timer)
      resolve()
    }
  })
  socket.on('data', (chunk) => {
    chunks.push(chunk)
    length += chunk.length
    wake?.()
  })
  socket.on('close', () => wake?.())
  socket.on('error', () => {}) // a cut shows as an answer missing
  await once(socket, 'connect')
  const flat = () => {
    if (chunks.length > 1) chunks.splice(0, chunks.length, Buffer.concat(chunks))
    return chunks[0] ?? Buffer.alloc(0)
  }
  const closedShort = () => new Error(`the connection closed with ${length} bytes of an answer: ${JSON.stringify(flat().toString('latin1', 0, 300))}`)
  return {
    socket,
    write: (text) => socket.write(Buffer.from(text, 'latin1')),
    async answer (method = 'GET') {
      let headEnd
      while ((headEnd = flat().indexOf('\r\n\r\n')) < 0) {
        if (socket.destroyed) throw closedShort()
        await woken()
      }
      const head = flat().toString('latin1', 0, headEnd)
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1])
      const headers = Object.fromEntries(head.split('\r\n').slice(1).map((line) => {
        const colon = line.indexOf(':')
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
      }))
      const bodiless = method === 'HEAD' || status < 200 || status === 204 || status === 304
      if (!bodiless && headers['content-length'] === undefined) throw new Error(`no Content-Length: ${head}`)
      const bodyLength = bodiless ? 0 : Number(headers['content-length'])
      const total = headEnd + 4 + bodyLength
      while (length < total) {
        if (socket.destroyed) throw closedShort()
        await woken()
      }
      const bytes = flat()
      chunks[0] = bytes.subarray(total)
      length -= total
      return { head, status, headers, body: bytes.subarray(headEnd + 4, total) }
    },
    async ask (request, method) {
      this.write(request)
      return this.answer(method)
    }
  }
}

// What a socket says of its connection's ends, as a lent request's handler
// reports it.
const endsOf = (socket) => ({
  remoteAddress: socket.remoteAddress,
  remotePort: socket.remotePort,
  remoteFamily: socket.remoteFamily,
  localAddress: socket.localAddress,
  localPort: socket.localPort,
  localFamily: socket.localFamily,
  address: socket.address()
})

// The applications, each with a first middleware counting what it sees
// (`seen.count`), a JSON route /api, a route /peer telling the request's
// socket, serveStatic's files (with `onReplayable: lane.offer`, and
// `serveOptions`) and its own 404. → { server, serve (to close), lane }.
const APPS = {
  'node:http': (seen, laneOptions, serveOptions) => {
    let serve = null
    const server = http.createServer((req, res) => {
      seen.count++
      if (req.url === '/api') return sendJson(res, { api: true, n: seen.count })
      if (req.url === '/peer') return sendJson(res, endsOf(req.socket))
      serve(req, res, () => {
        res.statusCode = 404
        res.end('not here\n')
      })
    })
    const lane = zcopy.nativeLane(server, laneOptions)
    serve = zcopy.serveStatic(root, { onReplayable: lane.offer, ...serveOptions })
    return { server, serve, lane }
  },
  express: (seen, laneOptions, serveOptions) => {
    const app = express()
    const server = http.createServer(app)
    const lane = zcopy.nativeLane(server, laneOptions)
    const serve = zcopy.serveStatic(root, { onReplayable: lane.offer, ...serveOptions })
    app.use((req, res, next) => {
      seen.count++
      next()
    })
    app.get('/api', (req, res) => res.json({ api: true, n: seen.count }))
    app.get('/peer', (req, res) => res.json({ ...endsOf(req.socket), ip: req.ip, protocol: req.protocol }))
    app.use(serve)
    return { server, serve, lane }
  },
  koa: (seen, laneOptions, serveOptions) => {
    // Koa composes its middleware in app.callback(), before the server (and
    // so the lane) exists: zcopy/koa's onReplayable reaches the lane through
    // the variable.
    let lane = null
    const app = new Koa()
    const serve = koaServe(root, { onReplayable: (req, res, answer) => lane.offer(req, res, answer), ...serveOptions })
    app.use(async (ctx, next) => {
      seen.count++
      await next()
    })
    app.use(async (ctx, next) => {
      if (ctx.path === '/api') ctx.body = { api: true, n: seen.count }
      else if (ctx.path === '/peer') ctx.body = { ...endsOf(ctx.req.socket), ip: ctx.ip, protocol: ctx.protocol }
      else await next()
    })
    app.use(serve)
    const server = http.createServer(app.callback())
    lane = zcopy.nativeLane(server, laneOptions)
    return { server, serve, lane }
  }
}

function sendJson (res, value) {
  res.setHeader('Content-Type', 'application/json')
  res.end(JSON.stringify(value))
}

// Closes what an application made, in the order an application would: the
// lane's close() is the server's (its connections, lent or handed off, are
// closed, and the server emits 'close').
async function closeApp ({ serve, lane }) {
  await lane.close(1000)
  await serve.close()
}

// A build for start(): a node:http server that counts each request, runs
// `before(req, res)` (a rewrite of req.url, a header set), then serveStatic
// with the lane's offer, or a bare 404.
function servingAfter (before) {
  return (seen) => {
    let serve = null
    const server = http.createServer((req, res) => {
      seen.count++
      before(req, res)
      serve(req, res, () => {
        res.statusCode = 404
        res.end()
      })
    })
    const lane = zcopy.nativeLane(server)
    serve = zcopy.serveStatic(root, { onReplayable: lane.offer })
    return { server, serve, lane }
  }
}

// Makes `build`'s application and its lane listen on 127.0.0.1; closed after
// the test. → { port, address, family, seen, server, serve, lane }
async function start (build, laneOptions, serveOptions = {}) {
  const seen = { count: 0 }
  const app = build(seen, laneOptions, serveOptions)
  cleanups.push(() => closeApp(app))
  const address = await app.lane.listen(0, '127.0.0.1')
  return { ...address, seen, ...app }
}

// Waits (up to 10 s, however loaded the machine) until `done()` holds.
async function until (done) {
  for (let i = 0; i < 500 && !done(); i++) await sleep(20)
  return done()
}

describe.runIf(zeroCopyAvailable)('a file is answered by the app once, then by the lane', () => {
  for (const [name, build] of Object.entries(APPS)) {
    test(`${name}: byte-exact replays; /api and the 404 reach the app every time, in order, on one keep-alive connection`, async () => {
      const { port, seen } = await start(build)
      const client = await connection(port)
      const first = await client.ask(GET('/blob.bin'))
      expect(first.status).toBe(200)
      expect(first.body.equals(BLOB)).toBe(true)
      expect(seen.count).toBe(1) // the app answered, and offered its answer

      // Pipelined, in one write: replays and the app's routes interleaved.
      client.write(GET('/blob.bin') + GET('/api') + GET('/blob.bin') + GET('/nope') + GET('/blob.bin') + GET('/api'))
      const answers = []
      for (let i = 0; i < 6; i++) answers.push(await client.answer())
      expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 404, 200, 200])
      for (const i of [0, 2, 4]) {
        expect(answers[i].body.equals(BLOB), `answer ${i}`).toBe(true)
        expect(withoutDate(answers[i].head), `answer ${i}`).toBe(withoutDate(first.head))
        expect(answers[i].headers.connection).toBe('keep-alive')
      }
      // The app saw /api, the 404 and /api again, in that order (its count
      // when it answered), and none of the file's requests.
      expect(JSON.parse(answers[1].body)).toEqual({ api: true, n: 2 })
      expect(JSON.parse(answers[5].body)).toEqual({ api: true, n: 4 })
      expect(seen.count).toBe(4)

      // Another connection: the lane answers it too.
      const other = await connection(port)
      expect((await other.ask(GET('/blob.bin'))).body.equals(BLOB)).toBe(true)
      expect(seen.count).toBe(4)
      // A HEAD is a request of its own: the app's once, then the lane's. But
      // zcopy/koa offers a HEAD's answer (no body to wait for) before Koa has
      // written its head, and offer() takes only an answer whose head was
      // written: behind Koa the lane replays no HEAD (nor a 304), and only
      // the answers are checked there.
      const headsReplayed = name !== 'koa'
      for (let i = 0; i < 3; i++) {
        const head = await other.ask(HEAD('/blob.bin'), 'HEAD')
        expect(head.status).toBe(200)
        expect(head.headers['content-length']).toBe(String(BLOB.length))
        expect(head.headers.etag).toBe(first.headers.etag)
        if (headsReplayed) expect(seen.count).toBe(5)
      }
      const beforeNope = seen.count
      expect((await other.ask(GET('/nope'))).status).toBe(404)
      expect((await other.ask(GET('/blob.bin'))).body.equals(BLOB)).toBe(true)
      expect(seen.count).toBe(beforeNope + 1)
    })
  }
})

// A lent request's file body goes by the lane's sendfile; when the connection
// cannot take it at once (a client that reads nothing yet), the lane sends
// the rest alone and Node's response ends at once, so that the app's request
// and response are garbage while the client takes its time (issue 62:
// test/lane/pipelining.test.mjs weighs the heap). onSent hears the body then,
// `finished` once the lane is done.
describe.runIf(zeroCopyAvailable)('a lent body the lane sends alone', () => {
  // A keep-alive connection that reads nothing until resume().
  async function stalled (port) {
    const client = await connection(port)
    client.socket.pause()
    return client
  }

  for (const [name, build] of Object.entries(APPS)) {
    test(`${name}: the response ends before the client reads; then the body byte-exact, the next request answered, onSent's finished complete`, async () => {
      const reports = []
      const { port, seen, server, lane } = await start(build, undefined, { onSent: (res, report) => reports.push(report) })
      const ended = []
      server.on('request', (req, res) => res.once('finish', () => ended.push(req.url)))
      const client = await stalled(port)
      client.write(GET('/big.bin?alone') + GET('/api'))
      expect(await until(() => ended.length === 1)).toBe(true)
      expect(ended).toEqual(['/big.bin?alone'])
      expect(seen.count).toBe(1) // /api waits for the body, unread
      expect(lane.connections()).toBe(1) // the lane's again, writing the body
      expect(reports).toHaveLength(1)
      expect(reports[0]).toMatchObject({ bytes: BIG.length, zeroCopy: true, complete: true })
      client.socket.resume()
      const answer = await client.answer()
      expect(answer.status).toBe(200)
      expect(answer.body.equals(BIG)).toBe(true)
      expect(JSON.parse((await client.answer()).body)).toEqual({ api: true, n: 2 })
      expect(await reports[0].finished).toEqual({ bytes: BIG.length, complete: true })
    })
  }

  test('Connection: close: the body whole, then the connection closes; finished complete', async () => {
    const reports = []
    const { port } = await start(APPS['node:http'], undefined, { onSent: (res, report) => reports.push({ report, res }) })
    const client = await stalled(port)
    const closed = once(client.socket, 'close')
    client.write(GET('/big.bin?close', 'Connection: close\r\n'))
    expect(await until(() => reports.length === 1)).toBe(true)
    expect(await until(() => reports[0].res.writableFinished)).toBe(true) // before the client read
    client.socket.resume()
    const answer = await client.answer()
    expect(answer.headers.connection).toBe('close')
    expect(answer.body.equals(BIG)).toBe(true)
    await closed
    expect(await reports[0].report.finished).toEqual({ bytes: BIG.length, complete: true })
  })

  test('close() waits for a body the lane sends alone (an answer in flight); close(0) cuts it, and finished says how much went', async () => {
    const reports = []
    const { port, lane } = await start(APPS['node:http'], undefined, { onSent: (res, report) => reports.push(report) })
    const client = await stalled(port)
    client.write(GET('/big.bin?waited'))
    expect(await until(() => reports.length === 1)).toBe(true)
    let closed = false
    const closing = lane.close().then(() => { closed = true })
    expect(lane.answersInFlight()).toBe(1)
    await sleep(200)
    expect(closed).toBe(false)
    client.socket.resume()
    expect((await client.answer()).body.equals(BIG)).toBe(true)
    await closing
    expect(await reports[0].finished).toEqual({ bytes: BIG.length, complete: true })

    const second = await start(APPS['node:http'], undefined, { onSent: (res, report) => reports.push(report) })
    const cut = await stalled(second.port)
    cut.write(GET('/big.bin?cut'))
    expect(await until(() => reports.length === 2)).toBe(true)
    await second.lane.close(0)
    const end = await reports[1].finished
    expect(end.complete).toBe(false)
    expect(end.bytes).toBeLessThan(BIG.length)
    cut.socket.resume() // the client gets what went, then the close
    await expect(cut.answer()).rejects.toThrow(/the connection closed with/)
  })
})

describe.runIf(zeroCopyAvailable)('what is the target\'s own answer', () => {
  test('Express: a mount (app.use(\'/static\', serveStatic)) is replayed; a rewrite of req.url, in or out of a mount, is not', async () => {
    const seen = { count: 0 }
    const app = express()
    const server = http.createServer(app)
    const lane = zcopy.nativeLane(server)
    const serve = zcopy.serveStatic(root, { onReplayable: lane.offer })
    cleanups.push(() => closeApp({ server, serve, lane }))
    app.use((req, res, next) => {
      seen.count++
      next()
    })
    app.use('/static', serve)
    app.use('/spa', (req, res, next) => { // a mount that rewrites too
      req.url = '/index.html'
      next()
    }, serve)
    app.use((req, res, next) => { // a single-page app's fallback
      if (req.path.startsWith('/app/')) req.url = '/index.html'
      next()
    }, serve)
    const { port } = await lane.listen(0, '127.0.0.1')
    const client = await connection(port)
    for (let i = 0; i < 3; i++) expect((await client.ask(GET('/static/blob.bin'))).body.equals(BLOB)).toBe(true)
    expect(seen.count).toBe(1)
    for (const target of ['/spa/route', '/app/route']) {
      const before = seen.count
      for (let i = 0; i < 3; i++) expect((await client.ask(GET(target))).body.equals(INDEX), target).toBe(true)
      expect(seen.count - before, target).toBe(3)
    }
    // The file itself, asked for as it is, is replayed: what kept the
    // rewritten ones from it was the rewrite.
    const before = seen.count
    for (let i = 0; i < 3; i++) expect((await client.ask(GET('/index.html'))).body.equals(INDEX)).toBe(true)
    expect(seen.count - before).toBe(1)
  })

  test('node:http: a single-page app\'s fallback (req.url = \'/index.html\') is not replayed', async () => {
    const { port, seen } = await start(servingAfter((req) => {
      if (req.url.startsWith('/app/')) req.url = '/index.html'
    }))
    const client = await connection(port)
    for (let i = 0; i < 3; i++) expect((await client.ask(GET('/app/settings'))).body.equals(INDEX)).toBe(true)
    expect(seen.count).toBe(3)
    for (let i = 0; i < 3; i++) expect((await client.ask(GET('/index.html'))).body.equals(INDEX)).toBe(true)
    expect(seen.count).toBe(4)
    for (let i = 0; i < 3; i++) expect((await client.ask(GET('/app/settings'))).body.equals(INDEX)).toBe(true)
    expect(seen.count).toBe(7)
  })
})

// A middleware before serveStatic sets a header field by res.setHeader (the
// query names which); the lane must not replay an answer that is not for
// everyone. The controls (a header that keeps it for everyone, or none) are
// replayed: the app sees one request of three.
describe.runIf(zeroCopyAvailable)('an answer that is not for everyone is not replayed', () => {
  const FIELDS = {
    'set-cookie': ['Set-Cookie', 'session=abc; HttpOnly'],
    private: ['Cache-Control', 'private, max-age=60'],
    'no-store': ['Cache-Control', 'no-store'],
    'vary-origin': ['Vary', 'Origin'],
    'vary-both': ['Vary', 'Accept-Encoding, Origin'],
    'vary-accept-encoding': ['Vary', 'Accept-Encoding'],
    public: ['Cache-Control', 'public, max-age=60']
  }

  function headersApp () {
    return start(servingAfter((req, res) => {
      const field = FIELDS[new URL(req.url, 'http://x').search.slice(1)]
      if (field !== undefined) res.setHeader(...field)
    }))
  }

  // Three times the same request on one connection, each answered with the
  // file: → the answers.
  async function thrice (port, request) {
    const client = await connection(port)
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await client.ask(request))
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      expect(answer.body.equals(BLOB)).toBe(true)
    }
    return answers
  }

  const CONTROLS = new Set(['vary-accept-encoding', 'public'])
  for (const [query, [name, value]] of Object.entries(FIELDS)) {
    const replayed = CONTROLS.has(query)
    test(`${name}: ${value}: ${replayed ? 'replayed (a control)' : 'the app sees every request'}`, async () => {
      const { port, seen } = await headersApp()
      const answers = await thrice(port, GET(`/blob.bin?${query}`))
      for (const answer of answers) expect(answer.headers[name.toLowerCase()]).toBe(value) // the middleware's, kept
      expect(seen.count).toBe(replayed ? 1 : 3)
    })
  }

  test('a request with Authorization: the app sees every one; the same request without it is replayed', async () => {
    const { port, seen } = await headersApp()
    await thrice(port, GET('/blob.bin?auth', 'Authorization: Bearer secret\r\n'))
    expect(seen.count).toBe(3)
    await thrice(port, GET('/blob.bin?no-auth'))
    expect(seen.count).toBe(4)
  })
})

describe.runIf(zeroCopyAvailable)('the socket of a lent request', () => {
  // The client connects from 127.0.0.2 (loopback is all of 127/8 on Linux)
  // to 127.0.0.1: each end's address is told apart from the other's.
  for (const [name, build] of Object.entries(APPS)) {
    test(`${name}: the connection's ends, as the client sees them${name === 'node:http' ? '' : `, and ${name === 'koa' ? 'ctx' : 'req'}.ip and .protocol`}`, async () => {
      const { port, seen } = await start(build)
      const client = await connection(port, { localAddress: '127.0.0.2' })
      expect([client.socket.localAddress, client.socket.remoteAddress]).toEqual(['127.0.0.2', '127.0.0.1'])
      const answer = await client.ask(GET('/peer'))
      expect(seen.count).toBe(1) // lent: the app answered
      const peer = JSON.parse(answer.body)
      expect(peer).toMatchObject({
        remoteAddress: '127.0.0.2',
        remotePort: client.socket.localPort,
        remoteFamily: 'IPv4',
        localAddress: '127.0.0.1',
        localPort: port,
        localFamily: 'IPv4',
        address: { address: '127.0.0.1', family: 'IPv4', port }
      })
      if (name !== 'node:http') expect(peer).toMatchObject({ ip: '127.0.0.2', protocol: 'http' })
    })
  }

  // Without a host the lane binds every interface as server.listen() does
  // (dual-stack '::' where IPv6 is on: an IPv4 client is then
  // ::ffff:127.0.0.1); the twin must say what Node's own socket says.
  test('what a net.Socket of Node\'s says of the same kind of connection, listening without a host', async () => {
    const handler = (req, res) => sendJson(res, endsOf(req.socket))
    const plain = http.createServer(handler)
    cleanups.push(() => new Promise((resolve) => {
      plain.closeAllConnections()
      plain.close(() => resolve())
    }))
    plain.listen(0)
    await once(plain, 'listening')
    const server = http.createServer(handler)
    const lane = zcopy.nativeLane(server)
    const serve = { close () {} }
    cleanups.push(() => closeApp({ server, serve, lane }))
    const address = await lane.listen()
    expect(address).toEqual({ ...plain.address(), port: address.port })
    // The ends with the ports checked and then set aside (each server has its own).
    const portless = (ends, serverPort, clientPort) => {
      expect([ends.localPort, ends.address.port, ends.remotePort]).toEqual([serverPort, serverPort, clientPort])
      return { ...ends, localPort: 0, remotePort: 0, address: { ...ends.address, port: 0 } }
    }
    const viaNode = await connection(plain.address().port)
    const viaLane = await connection(address.port)
    const nodes = JSON.parse((await viaNode.ask(GET('/'))).body)
    const lanes = JSON.parse((await viaLane.ask(GET('/'))).body)
    expect(portless(lanes, address.port, viaLane.socket.localPort)).toEqual(portless(nodes, plain.address().port, viaNode.socket.localPort))
  })
})

// A request with a body: the lane lends it to the app with its body
// (Content-Length or chunked) as it comes, or hands the connection to the
// server for good (a head it does not frame as Node does, an upgrade):
// either way the app reads the body and answers, and the connection goes on.
// Which requests the lane frames and lends has grown (GET and HEAD without a
// body at first, bodies since); a target in absolute form (`POST
// http://host/path`, as proxies send it) and an upgrade stay the server's.
describe.runIf(zeroCopyAvailable)('a request with a body', () => {
  async function bodyApp () {
    const seen = { count: 0, posts: [], sockets: [] }
    let serve = null
    const server = http.createServer((req, res) => {
      seen.count++
      seen.sockets.push(req.socket)
      if (req.method === 'POST') {
        let body = ''
        req.setEncoding('latin1').on('data', (chunk) => { body += chunk })
        req.on('end', () => {
          seen.posts.push(body)
          res.end(`posted ${body}\n`)
        })
        return
      }
      serve(req, res, () => {
        res.statusCode = 404
        res.end('not here\n')
      })
    })
    const lane = zcopy.nativeLane(server)
    serve = zcopy.serveStatic(root, { onReplayable: lane.offer })
    cleanups.push(() => closeApp({ server, serve, lane }))
    const { port } = await lane.listen(0, '127.0.0.1')
    const warm = await connection(port)
    expect((await warm.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n') // a row for /a.txt
    expect(seen.count).toBe(1)
    return { port, seen, warm }
  }

  test('Content-Length or chunked: the app reads it and answers; the requests after it, one by one and pipelined, are answered in order', async () => {
    const { port, seen, warm } = await bodyApp()
    const client = await connection(port)
    expect((await client.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(1) // the lane's
    const posted = await client.ask(POST('/form', 'name=value'))
    expect(posted.status).toBe(200)
    expect(posted.body.toString()).toBe('posted name=value\n')
    expect(posted.headers.connection).toBe('keep-alive')
    expect(seen.count).toBe(2)
    expect(seen.sockets[1].remotePort).toBe(client.socket.localPort)
    expect((await client.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    client.write(POST('/form', 'x=1&y=2') + GET('/nope') + POST('/form', '') + GET('/a.txt') + CHUNKED('/form', ['hello', ' world']) +
      GET('/a.txt', 'Connection: close\r\n'))
    expect((await client.answer()).body.toString()).toBe('posted x=1&y=2\n')
    expect((await client.answer()).status).toBe(404)
    expect((await client.answer()).body.toString()).toBe('posted \n')
    expect((await client.answer()).body.toString()).toBe('alpha\n')
    expect((await client.answer()).body.toString()).toBe('posted hello world\n')
    const last = await client.answer()
    expect(last.body.toString()).toBe('alpha\n')
    expect(last.headers.connection).toBe('close')
    expect(seen.posts).toEqual(['name=value', 'x=1&y=2', '', 'hello world'])
    if (!client.socket.destroyed) await once(client.socket, 'close')
    // The lane goes on with its own connections.
    const before = seen.count
    expect((await warm.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(before)
  })

  test('a POST the lane does not frame (absolute-form target): the connection is the server\'s for good, a net.Socket; the requests after it reach the app', async () => {
    const { port, seen, warm } = await bodyApp()
    const client = await connection(port)
    expect((await client.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(1) // the lane's
    expect((await client.ask(POST('http://localhost/form', 'hello world'))).body.toString()).toBe('posted hello world\n')
    const socket = seen.sockets.at(-1)
    expect(socket).toBeInstanceOf(net.Socket) // the connection itself, handed over
    expect([socket.remoteAddress, socket.remotePort]).toEqual([client.socket.localAddress, client.socket.localPort])
    // Node reads this connection from now on: /a.txt, which the lane
    // answers elsewhere, reaches the app here, each time.
    for (let i = 1; i <= 2; i++) {
      expect((await client.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
      expect(seen.count).toBe(2 + i)
      expect(seen.sockets.at(-1)).toBe(socket)
    }
    const before = seen.count
    expect((await warm.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(before)
  })

  test('an upgrade: the server\'s \'upgrade\' listener gets the connection itself and talks on it', async () => {
    let serve = null
    const server = http.createServer((req, res) => serve(req, res, () => {
      res.statusCode = 404
      res.end()
    }))
    const upgrades = []
    server.on('upgrade', (req, socket, head) => {
      upgrades.push({ url: req.url, socket, head: head.length })
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\n')
      socket.on('data', (chunk) => socket.write(chunk.toString('latin1').toUpperCase()))
    })
    const lane = zcopy.nativeLane(server)
    serve = zcopy.serveStatic(root, { onReplayable: lane.offer })
    cleanups.push(() => closeApp({ server, serve, lane }))
    cleanups.push(() => upgrades.forEach(({ socket }) => socket.destroy()))
    const { port } = await lane.listen(0, '127.0.0.1')
    const client = await connection(port)
    expect((await client.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n') // lent first
    const switched = await client.ask('GET /shout HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\n')
    expect(switched.status).toBe(101)
    expect(upgrades).toMatchObject([{ url: '/shout', head: 0 }])
    expect(upgrades[0].socket).toBeInstanceOf(net.Socket)
    expect(upgrades[0].socket.remotePort).toBe(client.socket.localPort)
    client.write('hello, lane')
    let echoed = ''
    client.socket.on('data', (chunk) => { echoed += chunk.toString('latin1') })
    expect(await until(() => echoed === 'HELLO, LANE')).toBe(true)
  })
})

describe('arguments', () => {
  test('a server that is not a node:http Server: TypeError ERR_INVALID_ARG_TYPE', () => {
    for (const server of [https.createServer(), net.createServer(), {}, express(), new Koa(), undefined, null]) {
      expect(() => zcopy.nativeLane(server)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
      expect(() => zcopy.nativeLane(server)).toThrow(TypeError)
    }
  })

  test('bad options or onAnswer: TypeError ERR_INVALID_ARG_TYPE', () => {
    for (const options of [null, 'x', 1, [], () => {}, { onAnswer: 1 }, { onAnswer: 'log' }, { onAnswer: {} }]) {
      expect(() => zcopy.nativeLane(http.createServer(), options), JSON.stringify(options)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
    }
  })

  test.runIf(!zeroCopyAvailable)('without the addon (ZCOPY_NATIVE=0): an Error ERR_ZCOPY_NO_ADDON, not a TypeError', () => {
    let thrown = null
    try {
      zcopy.nativeLane(http.createServer(), { onAnswer: () => {} })
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(Error)
    expect(thrown).not.toBeInstanceOf(TypeError)
    expect(thrown.code).toBe('ERR_ZCOPY_NO_ADDON')
    expect(thrown.message).toMatch(/native addon/)
  })

  describe.runIf(zeroCopyAvailable)('with the addon', () => {
    test('a server listening already: an Error (not a TypeError); a server not listening: a lane', async () => {
      const server = http.createServer()
      cleanups.push(() => new Promise((resolve) => server.close(() => resolve())))
      server.listen(0, '127.0.0.1')
      await once(server, 'listening')
      let thrown = null
      try {
        zcopy.nativeLane(server)
      } catch (err) {
        thrown = err
      }
      expect(thrown).toBeInstanceOf(Error)
      expect(thrown).not.toBeInstanceOf(TypeError)
      expect(thrown.message).toMatch(/listening already/)
      const lane = zcopy.nativeLane(http.createServer())
      cleanups.push(() => lane.close())
      expect(typeof lane.offer).toBe('function')
    })

    test('bad port, host or fd to listen(), bad timeout to close(): thrown at once, with their codes', async () => {
      const lane = zcopy.nativeLane(http.createServer())
      cleanups.push(() => lane.close())
      const type = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
      const range = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' }
      for (const [args, error] of [
        [['x'], type], [['8080'], type], [[{ port: 'x' }], type], [[0n], type],
        [[-1], range], [[65536], range], [[1.5], range], [[NaN], range], [[{ port: 70000 }], range],
        [[0, 5], type], [[{ host: {} }], type], [[{ port: 0, host: 127 }], type],
        [[{ fd: 'x' }], type], [[{ fd: -1 }], range], [[{ fd: 2.5 }], range]
      ]) {
        expect(() => lane.listen(...args), JSON.stringify(args, (key, value) => typeof value === 'bigint' ? `${value}n` : value)).toThrow(expect.objectContaining(error))
      }
      for (const timeout of ['x', -1, NaN, null, '1000']) {
        expect(() => lane.close(timeout), String(timeout)).toThrow(expect.objectContaining(type))
      }
      // None of them bound or closed anything: the lane still listens and closes.
      const { port } = await lane.listen({ port: 0, host: '127.0.0.1' })
      expect(port).toBeGreaterThan(0)
    })
  })
})

describe.runIf(zeroCopyAvailable)('listen()', () => {
  test('listen({ port, host }) and listen({ fd, host }) (a listening socket this process was given)', async () => {
    const engine = require('../../lib/engine')
    const seen = { count: 0 }
    const one = APPS['node:http'](seen)
    cleanups.push(() => closeApp(one))
    const address = await one.lane.listen({ port: 0, host: '127.0.0.1' })
    expect(address).toEqual({ address: '127.0.0.1', family: 'IPv4', port: expect.any(Number) })
    expect((await (await connection(address.port)).ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')

    const bound = engine.Lane.bind('127.0.0.1', 0, false) // as zcopy serve's primary shares one with its workers
    const two = APPS['node:http'](seen)
    cleanups.push(() => closeApp(two))
    expect(await two.lane.listen({ fd: bound.fd, host: '127.0.0.1' })).toEqual({ address: '127.0.0.1', family: 'IPv4', port: bound.port })
    expect((await (await connection(bound.port)).ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(2) // each lane learnt the file from its own app
  })

  test('a port in use: the promise rejects with EADDRINUSE', async () => {
    const { port } = await start(APPS['node:http'])
    const other = APPS['node:http']({ count: 0 })
    cleanups.push(() => closeApp(other))
    await expect(other.lane.listen(port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' })
  })
})

describe.runIf(zeroCopyAvailable)('close()', () => {
  test('once only: a second call returns the first\'s promise; idle connections are closed, new ones refused', async () => {
    const { port, seen, lane } = await start(APPS['node:http'])
    const idle = await connection(port)
    await idle.ask(GET('/a.txt'))
    expect(seen.count).toBe(1)
    const idleClosed = once(idle.socket, 'close')
    const closing = lane.close()
    expect(lane.close()).toBe(closing)
    expect(lane.close(0)).toBe(closing)
    await closing
    await idleClosed
    const late = net.connect(port, '127.0.0.1')
    cleanups.push(() => late.destroy())
    const [err] = await once(late, 'error')
    expect(err.code).toBe('ECONNREFUSED')
  })

  test('an answer the lane is writing to a slow reader: in flight, finished before close() resolves; meanwhile idle connections closed, new ones refused', async () => {
    const { port, seen, lane } = await start(APPS['node:http'])
    const idle = await connection(port)
    expect((await idle.ask(GET('/big.bin'))).body.equals(BIG)).toBe(true) // the app's, then offered
    expect((await idle.ask(GET('/a.txt'))).body.toString()).toBe('alpha\n')
    expect(seen.count).toBe(2)
    const idleClosed = once(idle.socket, 'close')
    // The replay, on a connection of its own: one that read 16 MiB quickly
    // has had its receive buffer grown by the kernel (tcp_rmem's maximum is
    // 32 MiB here), and could take the whole answer while "paused". This
    // client stops reading at its first bytes, so its buffers stay small and
    // hold a few MiB of the 16 at most: the lane is still writing.
    const client = await connection(port)
    client.socket.once('data', () => client.socket.pause())
    client.write(GET('/big.bin'))
    await once(client.socket, 'data')
    let closed = false
    const closing = lane.close().then(() => { closed = true })
    expect(lane.answersInFlight()).toBe(1)
    await idleClosed // at once, not after the answer in flight
    const late = net.connect(port, '127.0.0.1')
    cleanups.push(() => late.destroy())
    const [err] = await once(late, 'error')
    expect(err.code).toBe('ECONNREFUSED')
    await sleep(200)
    expect(closed).toBe(false) // not while the answer is in flight (however long this test waited)
    expect(lane.answersInFlight()).toBe(1)
    client.socket.resume()
    const answer = await client.answer()
    expect(answer.body.equals(BIG)).toBe(true)
    expect(seen.count).toBe(2) // the second /big.bin was the lane's
    await closing
    if (!client.socket.destroyed) await once(client.socket, 'close') // the lane closed it after the answer
  })

  test('a lent request the app is still answering: not the lane\'s answer in flight, but close() waits for it; close(0) cuts it', async () => {
    const held = []
    const server = http.createServer((req, res) => {
      held.push(res)
    })
    const lane = zcopy.nativeLane(server)
    cleanups.push(() => closeApp({ server, serve: { close () {} }, lane }))
    const { port } = await lane.listen(0, '127.0.0.1')
    const client = await connection(port)
    client.write(GET('/slow'))
    expect(await until(() => held.length === 1)).toBe(true)
    let closed = false
    const closing = lane.close().then(() => { closed = true })
    expect(lane.answersInFlight()).toBe(0) // the server's answer, which it counts as its own
    await sleep(200)
    expect(closed).toBe(false)
    held[0].end('done\n')
    expect((await client.answer()).body.toString()).toBe('done\n')
    await closing

    // close(0): the app's answer is cut, and the app hears its response closed.
    const server2 = http.createServer((req, res) => {
      held.push(res)
    })
    const lane2 = zcopy.nativeLane(server2)
    cleanups.push(() => closeApp({ server: server2, serve: { close () {} }, lane: lane2 }))
    const port2 = (await lane2.listen(0, '127.0.0.1')).port
    const client2 = await connection(port2)
    client2.write(GET('/slow'))
    expect(await until(() => held.length === 2)).toBe(true)
    const resClosed = once(held[1], 'close')
    const clientClosed = once(client2.socket, 'close')
    await lane2.close(0)
    await resClosed
    expect(held[1].writableFinished).toBe(false)
    await clientClosed
    await expect(client2.answer()).rejects.toThrow(/closed with 0 bytes/)
  })

  // Node and libuv open a few descriptors once per process the first time
  // they are needed (libuv's reserve descriptor on /dev/null at its first
  // listen, the loop's inotify and io_uring descriptors): one whole round
  // first, so that the round measured opens only what it should close.
  // Compared by what each descriptor points at (test/support/fd-table.cjs),
  // after a settle, not by count alone: the worker process may have one of
  // its own open for a moment.
  test('no descriptor left open: server, serveStatic, lane, replays, lent and handed-off requests, then closed', async () => {
    async function round () {
      const seen = { count: 0 }
      const app = APPS.express(seen)
      const { port } = await app.lane.listen(0, '127.0.0.1')
      const clients = []
      const open = async () => {
        const client = await connection(port)
        clients.push(client)
        return client
      }
      try {
        const a = await open()
        for (let i = 0; i < 3; i++) expect((await a.ask(GET('/blob.bin'))).body.equals(BLOB)).toBe(true)
        expect((await a.ask(GET('/api'))).status).toBe(200)
        expect((await a.ask(GET('/nope'))).status).toBe(404)
        const b = await open()
        b.write(POST('/api', 'x') + GET('/a.txt'))
        expect((await b.answer()).status).toBe(404) // Express: no POST /api route
        expect((await b.answer()).body.toString()).toBe('alpha\n')
        const c = await open() // the connection handed to the server
        c.write(POST('http://localhost/api', 'x') + GET('/a.txt'))
        expect((await c.answer()).status).toBe(404)
        expect((await c.answer()).body.toString()).toBe('alpha\n')
        await open() // idle: the lane closes it
        expect(seen.count).toBe(7)
      } finally {
        await closeApp(app) // the connections, the handed-off one too
        await Promise.all(clients.map(({ socket }) => socket.destroyed ? null : once(socket, 'close')))
      }
    }
    await round()
    await sleep(100)
    const before = fdTable()
    const count = before.size
    await round()
    await until(() => openedSince(before).length === 0)
    expect(openedSince(before)).toEqual([])
    expect(fdTable().size).toBeLessThanOrEqual(count)
  })
})

describe.runIf(zeroCopyAvailable)('onAnswer', () => {
  test('hears the lane\'s own answers (GET and HEAD), not the app\'s', async () => {
    const heard = []
    const { port, seen } = await start(APPS['node:http'], { onAnswer: (answer) => heard.push(answer) })
    const client = await connection(port)
    await client.ask(GET('/blob.bin')) // the app's
    await client.ask(HEAD('/blob.bin'), 'HEAD') // the app's
    await client.ask(GET('/nope')) // the app's
    expect(seen.count).toBe(3)
    const started = Date.now()
    await client.ask(GET('/blob.bin'))
    await client.ask(HEAD('/blob.bin'), 'HEAD')
    await client.ask(GET('/blob.bin?last'))
    await client.ask(GET('/blob.bin?last'))
    expect(seen.count).toBe(4)
    expect(await until(() => heard.some(({ target }) => target === '/blob.bin?last'))).toBe(true)
    expect(heard).toEqual([
      { method: 'GET', target: '/blob.bin', status: 200, bytes: BLOB.length },
      { method: 'HEAD', target: '/blob.bin', status: 200, bytes: 0 },
      { method: 'GET', target: '/blob.bin?last', status: 200, bytes: BLOB.length }
    ].map((fields) => ({
      ...fields,
      time: expect.any(Number),
      ms: expect.any(Number),
      zeroCopy: expect.any(Boolean),
      fromMemory: expect.any(Boolean),
      encoding: null,
      ended: 'complete'
    })))
    for (const { time, ms } of heard) {
      expect(time).toBeGreaterThanOrEqual(started - 1000)
      expect(time).toBeLessThanOrEqual(Date.now() + 1000)
      expect(ms).toBeGreaterThanOrEqual(0)
    }
  })
})
