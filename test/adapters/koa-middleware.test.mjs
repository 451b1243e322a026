// What Koa middleware after `await next()` sees of a zcopy/koa file answer, as
// with koa-static: ctx.body (a stream with the file's `path`, or from memory a
// Buffer with it), ctx.status, ctx.type and ctx.length, which koa-compress
// compresses and a middleware may replace. Left alone, the body still goes by
// sendfile, and a client that closes as soon as it has it is no error. Every
// descriptor is released: the middleware closes (its open-file cache waits for
// bodies in flight) and none is left open under the served folder, whether the
// body was sent, compressed, replaced unread, or cut by a client that went away.
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { once } from 'node:events'
import Koa from 'koa'
import compress from 'koa-compress'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import zcopy from 'zcopy'
import serve from 'zcopy/koa'
import { fdsUnder } from '../support/http.mjs'
import { removeTempDir } from '../support/files.mjs'
import { cutAfterFirstBytes, expectCompressedFile, makeTree, request } from './helpers.mjs'

let tree
beforeAll(() => { tree = makeTree() })
afterAll(() => removeTempDir(tree.root))

const execFileAsync = promisify(execFile)
const CLOSE_ON_LAST_BYTE = new URL('../fixtures/http/close-on-last-byte.cjs', import.meta.url).pathname

// A Koa app on a real socket: `before` (middleware ahead of zcopy/koa), then
// zcopy/koa with an onSent that records what it heard. → { port, sent, errors, close() }
async function koaApp (before, options = {}) {
  const app = new Koa()
  const sent = []
  const errors = []
  app.on('error', (err) => errors.push(err))
  for (const middleware of before) app.use(middleware)
  const middleware = serve(tree.root, { ...options, onSent: (res, result) => sent.push(result) })
  app.use(middleware)
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const close = async () => {
    server.close()
    await middleware.close()
  }
  return { port: server.address().port, sent, errors, close }
}

describe('Koa: middleware after next() sees the answer', () => {
  let app, seen
  beforeAll(async () => {
    seen = []
    app = await koaApp([async (ctx, next) => {
      await next()
      const { body } = ctx
      seen.push({ url: ctx.url, path: body && body.path, buffer: Buffer.isBuffer(body), status: ctx.status, type: ctx.type, length: ctx.length })
      if (ctx.get('x-replace')) ctx.body = 'replaced by a middleware'
    }])
  })
  afterAll(() => app.close()) // again, if a test failed before closing it

  it('a file from disk: a stream with the file\'s path, its status, type and length; left alone, it goes by sendfile', async () => {
    seen.length = app.sent.length = 0
    const res = await request(app.port, '/big.bin')
    expect(res.status).toBe(200)
    expect(res.body.equals(tree.big)).toBe(true)
    expect(seen).toEqual([{ url: '/big.bin', path: path.join(tree.root, 'big.bin'), buffer: false, status: 200, type: 'application/octet-stream', length: tree.big.length }])
    await vi.waitFor(() => expect(app.sent).toEqual([{ bytes: tree.big.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }]))
  })

  it('a small hot file from memory: a Buffer with the file\'s path', async () => {
    // The cache reads a file asked for twice into memory, in the background:
    // asked again until an answer comes from there.
    await vi.waitFor(async () => {
      seen.length = 0
      app.sent.length = 0
      const res = await request(app.port, '/hello.txt')
      expect(res.body.toString()).toBe('hello, adapters\n')
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
      expect(seen).toEqual([{ url: '/hello.txt', path: path.join(tree.root, 'hello.txt'), buffer: true, status: 200, type: 'text/plain', length: 16 }])
      expect(app.sent).toEqual([{ bytes: 16, zeroCopy: false, fromMemory: true, complete: true }])
    }, { timeout: 10_000, interval: 20 })
  })

  it('HEAD, 206 and 304 keep their status and headers through the middleware', async () => {
    const head = await request(app.port, '/big.bin', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers['content-length']).toBe(String(tree.big.length))
    expect(head.body.length).toBe(0)
    const range = await request(app.port, '/big.bin', { headers: { range: 'bytes=10-19' } })
    expect(range.status).toBe(206)
    expect(range.headers['content-range']).toBe(`bytes 10-19/${tree.big.length}`)
    expect(range.body.equals(tree.big.subarray(10, 20))).toBe(true)
    const again = await request(app.port, '/big.bin', { headers: { 'if-none-match': head.headers.etag } })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
    expect(again.headers['content-length']).toBeUndefined()
    expect(seen.slice(-3).map(({ status }) => status)).toEqual([200, 206, 304])
  })

  it('an empty file: 200 with no body, not Koa\'s status message', async () => {
    fs.writeFileSync(path.join(tree.root, 'empty.txt'), '')
    const res = await request(app.port, '/empty.txt')
    expect(res.status).toBe(200)
    expect(res.headers['content-length']).toBe('0')
    expect(res.body.length).toBe(0)
  })

  it('a middleware that replaces the body unread: its body goes out, and the file is released', async () => {
    app.sent.length = 0
    const res = await request(app.port, '/big.bin', { headers: { 'x-replace': '1' } })
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('replaced by a middleware')
    await vi.waitFor(() => expect(app.sent).toEqual([{ bytes: 0, zeroCopy: false, complete: false }]))
  })

  it('the same behind a pipelined response, its connection gone before it got the socket: released', async () => {
    // The first response (64 MiB, more than the socket buffers hold, never
    // read) holds the connection; the second, replaced unread, waits for the
    // socket and never gets it, nor a 'close' of its own: the connection's
    // close must release its file.
    const huge = path.join(tree.root, 'huge.bin')
    fs.writeFileSync(huge, '')
    fs.truncateSync(huge, 64 * 1024 * 1024) // sparse: its bytes do not matter
    app.sent.length = 0
    seen.length = 0
    const socket = net.connect(app.port, '127.0.0.1')
    socket.pause()
    socket.write('GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /big.bin HTTP/1.1\r\nHost: x\r\nx-replace: 1\r\n\r\n')
    await vi.waitFor(() => expect(seen.length).toBe(2))
    socket.destroy()
    await vi.waitFor(() => expect(app.sent.length).toBe(2))
    expect(app.sent).toContainEqual({ bytes: 0, zeroCopy: false, complete: false })
  })

  it('clients that close as soon as they have the whole body: no error reaches the app', async () => {
    // Koa's own stream handling (stream.pipeline) calls a response that closes
    // before the stream's 'end' a premature close; a sendfile'd body can reach
    // the client before the server hears that the transfer is done. The client
    // runs in its own process, as curl would: in this one, the server's event
    // loop would always hear first. (A client that resets its connection
    // mid-body, as above, is an error Koa reports.)
    // A body of just over 256 KiB: its first part goes from the event loop, the
    // rest from the thread pool, whose completion is what the server hears
    // last (a client that does this got Koa's error once in 30 here).
    const mid = Buffer.alloc(300_000, 'm')
    fs.writeFileSync(path.join(tree.root, 'mid.txt'), mid)
    app.sent.length = app.errors.length = 0
    const { stdout } = await execFileAsync(process.execPath, [CLOSE_ON_LAST_BYTE, String(app.port), '/mid.txt', '300'])
    expect(stdout.trim()).toBe('300')
    await vi.waitFor(() => expect(app.sent.length).toBe(300))
    expect(app.errors).toEqual([])
  })

  it('closes with every descriptor released', async () => {
    await app.close()
    expect(fdsUnder(tree.root)).toEqual([])
  })
})

describe('Koa with koa-compress', () => {
  let app
  beforeAll(async () => { app = await koaApp([compress({ threshold: 0 })]) })
  afterAll(() => app.close()) // again, if a test failed before closing it

  for (const coding of ['gzip', 'deflate', 'br']) {
    it(`${coding}: the file's bytes, compressed, without the file's Content-Length`, async () => {
      await expectCompressedFile(app.port, '/big.bin', coding, tree.big)
    })
  }

  it('a small hot file from memory is compressed too', async () => {
    await vi.waitFor(async () => {
      app.sent.length = 0
      const res = await request(app.port, '/hello.txt', { headers: { 'accept-encoding': 'gzip' } })
      expect(res.headers['content-encoding']).toBe('gzip')
      expect(zlib.gunzipSync(res.body).toString()).toBe('hello, adapters\n')
      expect(app.sent).toEqual([{ bytes: 16, zeroCopy: false, fromMemory: true, complete: true }])
    }, { timeout: 10_000, interval: 20 })
  })

  it('a client that accepts no coding gets the file by sendfile; a range is not compressed', async () => {
    app.sent.length = 0
    const res = await request(app.port, '/big.bin', { headers: { 'accept-encoding': 'identity' } })
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.body.equals(tree.big)).toBe(true)
    await vi.waitFor(() => expect(app.sent).toEqual([{ bytes: tree.big.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }]))
    const range = await request(app.port, '/big.bin', { headers: { 'accept-encoding': 'gzip', range: 'bytes=0-99' } })
    expect(range.status).toBe(206)
    expect(range.headers['content-encoding']).toBeUndefined()
    expect(range.body.equals(tree.big.subarray(0, 100))).toBe(true)
  })

  it('a file truncated while it is compressed: the app hears it, the response is cut, the server goes on', async () => {
    const name = path.join(tree.root, 'shrinks.bin')
    fs.writeFileSync(name, crypto.randomBytes(8 * 1024 * 1024)) // incompressible: the client's pause holds the reads back
    app.errors.length = 0
    const req = http.get({ host: '127.0.0.1', port: app.port, path: '/shrinks.bin', headers: { 'accept-encoding': 'gzip' }, agent: false })
    const [res] = await once(req, 'response')
    expect(res.headers['content-encoding']).toBe('gzip')
    res.pause()
    await new Promise((resolve) => setTimeout(resolve, 100))
    fs.truncateSync(name, 0)
    res.resume()
    const cut = await new Promise((resolve) => {
      res.on('end', () => resolve(false))
      res.on('error', () => resolve(true))
      res.on('aborted', () => resolve(true))
      req.on('error', () => resolve(true))
    })
    expect(cut).toBe(true)
    await vi.waitFor(() => expect(app.errors.map((err) => err.code)).toContain('ERR_ZCOPY_TRUNCATED'))
    const again = await request(app.port, '/big.bin', { headers: { 'accept-encoding': 'gzip' } })
    expect(zlib.gunzipSync(again.body).equals(tree.big)).toBe(true)
  })

  it('clients that go away mid-body: the server goes on, every descriptor is released', async () => {
    app.sent.length = 0
    for (let i = 0; i < 8; i++) {
      const coding = i % 2 === 0 ? 'gzip' : 'identity' // compressed, and by sendfile
      expect(await cutAfterFirstBytes(app.port, '/big.bin', { 'accept-encoding': coding })).toBe(200)
    }
    await vi.waitFor(() => expect(app.sent.length).toBe(8))
    expect(app.sent.every((result) => result.complete === false)).toBe(true)
    const res = await request(app.port, '/big.bin', { headers: { 'accept-encoding': 'gzip' } })
    expect(zlib.gunzipSync(res.body).equals(tree.big)).toBe(true)
    await app.close()
    expect(fdsUnder(tree.root)).toEqual([])
  })
})

it('defer: true answers through the middleware after next() too', async () => {
  const app = await koaApp([compress({ threshold: 0 })], { defer: true })
  try {
    const res = await request(app.port, '/big.bin', { headers: { 'accept-encoding': 'gzip' } })
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(zlib.gunzipSync(res.body).equals(tree.big)).toBe(true)
  } finally {
    await app.close()
  }
  expect(fdsUnder(tree.root)).toEqual([])
})

it('the tree is intact', () => {
  expect(fs.readFileSync(path.join(tree.root, 'big.bin')).equals(tree.big)).toBe(true)
})
