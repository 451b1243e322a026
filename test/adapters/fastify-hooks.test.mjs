// What Fastify's onSend hooks see of a zcopy/fastify file answer, as with
// @fastify/static: the body (a stream with the file's `path`, or from memory a
// Buffer with it), which @fastify/compress compresses and a hook may replace.
// Left alone, the body still goes by sendfile. Every descriptor is released:
// the app closes (its open-file cache waits for bodies in flight) and none is
// left open under the served folder, whether the body was sent, compressed,
// replaced unread, or cut by a client that went away.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import zlib from 'node:zlib'
import Fastify from 'fastify'
import fastifyCompress from '@fastify/compress'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import zcopy from 'zcopy'
import zcopyFastify from 'zcopy/fastify'
import { fdsUnder } from '../support/http.mjs'
import { removeTempDir } from '../support/files.mjs'
import { cutAfterFirstBytes, expectCompressedFile, makeTree, request } from './helpers.mjs'

let tree
beforeAll(() => { tree = makeTree() })
afterAll(() => removeTempDir(tree.root))

describe('Fastify: onSend hooks see the body', () => {
  let app, port, sent, seen
  beforeAll(async () => {
    app = Fastify()
    sent = []
    seen = []
    app.addHook('onSend', async (request, reply, payload) => {
      seen.push({ url: request.url, path: payload && payload.path, buffer: Buffer.isBuffer(payload) })
      if (request.headers['x-replace']) return 'replaced by a hook'
      return payload
    })
    app.register(zcopyFastify, { root: tree.root, onSent: (res, result) => sent.push(result) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = app.server.address().port
  })
  afterAll(() => app.close()) // again, if a test failed before closing it

  it('a file from disk: a stream with the file\'s path; left alone, it goes by sendfile', async () => {
    seen.length = sent.length = 0
    const res = await request(port, '/big.bin')
    expect(res.status).toBe(200)
    expect(res.body.equals(tree.big)).toBe(true)
    expect(seen).toEqual([{ url: '/big.bin', path: path.join(tree.root, 'big.bin'), buffer: false }])
    await vi.waitFor(() => expect(sent).toEqual([{ bytes: tree.big.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }]))
  })

  it('a small hot file from memory: a Buffer with the file\'s path', async () => {
    // The cache reads a file asked for twice into memory, in the background:
    // asked again until an answer comes from there.
    const asked = []
    await vi.waitFor(async () => {
      seen.length = 0
      const res = await request(port, '/hello.txt')
      asked.push(seen[0])
      expect(res.body.toString()).toBe('hello, adapters\n')
      expect(seen).toEqual([{ url: '/hello.txt', path: path.join(tree.root, 'hello.txt'), buffer: true }])
    }, { timeout: 10_000, interval: 20 })
    // Before that, from disk: a stream with the same path.
    for (const before of asked.slice(0, -1)) expect(before).toEqual({ url: '/hello.txt', path: path.join(tree.root, 'hello.txt'), buffer: false })
  })

  it('HEAD, 206 and 304 keep their status and headers through the hooks', async () => {
    const head = await request(port, '/big.bin', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers['content-length']).toBe(String(tree.big.length))
    expect(head.body.length).toBe(0)
    const range = await request(port, '/big.bin', { headers: { range: 'bytes=10-19' } })
    expect(range.status).toBe(206)
    expect(range.headers['content-range']).toBe(`bytes 10-19/${tree.big.length}`)
    expect(range.body.equals(tree.big.subarray(10, 20))).toBe(true)
    const again = await request(port, '/big.bin', { headers: { 'if-none-match': head.headers.etag } })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
    expect(again.headers['content-length']).toBeUndefined()
  })

  it('a hook that replaces the body unread: its payload goes out, and the file is released', async () => {
    sent.length = 0
    const res = await request(port, '/big.bin', { headers: { 'x-replace': '1' } })
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('replaced by a hook')
    await vi.waitFor(() => expect(sent).toEqual([{ bytes: 0, zeroCopy: false, complete: false }]))
  })

  it('the same behind a pipelined response, its connection gone before it got the socket: released', async () => {
    // The first response (64 MiB, more than the socket buffers hold, never
    // read) holds the connection; the second, replaced unread by the hook,
    // waits for the socket and never gets it, nor a 'close' of its own: the
    // connection's close must release its file.
    const huge = path.join(tree.root, 'huge.bin')
    fs.writeFileSync(huge, '')
    fs.truncateSync(huge, 64 * 1024 * 1024) // sparse: its bytes do not matter
    sent.length = 0
    seen.length = 0
    const socket = net.connect(port, '127.0.0.1')
    socket.pause()
    socket.write('GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /big.bin HTTP/1.1\r\nHost: x\r\nx-replace: 1\r\n\r\n')
    await vi.waitFor(() => expect(seen.length).toBe(2))
    socket.destroy()
    await vi.waitFor(() => expect(sent.length).toBe(2))
    // The replaced body, released unread (the first may have handed all its
    // bytes to Node before the connection went: the fallback does).
    expect(sent).toContainEqual({ bytes: 0, zeroCopy: false, complete: false })
  })

  it('closes with every descriptor released', async () => {
    await app.close()
    expect(fdsUnder(tree.root)).toEqual([])
  })
})

describe('Fastify with @fastify/compress', () => {
  let app, port, sent
  beforeAll(async () => {
    app = Fastify()
    sent = []
    app.register(fastifyCompress, { threshold: 0 })
    app.register(zcopyFastify, { root: tree.root, onSent: (res, result) => sent.push(result) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = app.server.address().port
  })
  afterAll(() => app.close()) // again, if a test failed before closing it

  for (const coding of ['gzip', 'deflate', 'br']) {
    it(`${coding}: the file's bytes, compressed, without the file's Content-Length`, async () => {
      await expectCompressedFile(port, '/big.bin', coding, tree.big)
    })
  }

  it('a small hot file from memory is compressed too', async () => {
    // Asked again until the answer comes from the memory cache (read in the background).
    await vi.waitFor(async () => {
      sent.length = 0
      const res = await request(port, '/hello.txt', { headers: { 'accept-encoding': 'gzip' } })
      expect(res.headers['content-encoding']).toBe('gzip')
      expect(zlib.gunzipSync(res.body).toString()).toBe('hello, adapters\n')
      expect(sent).toEqual([{ bytes: 16, zeroCopy: false, fromMemory: true, complete: true }])
    }, { timeout: 10_000, interval: 20 })
  })

  it('a client that accepts no coding gets the file by sendfile', async () => {
    sent.length = 0
    const res = await request(port, '/big.bin', { headers: { 'accept-encoding': 'identity' } })
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.body.equals(tree.big)).toBe(true)
    await vi.waitFor(() => expect(sent).toEqual([{ bytes: tree.big.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }]))
  })

  it('clients that go away mid-body: the server goes on, every descriptor is released', async () => {
    sent.length = 0
    for (let i = 0; i < 8; i++) {
      const coding = i % 2 === 0 ? 'gzip' : 'identity' // compressed, and by sendfile
      expect(await cutAfterFirstBytes(port, '/big.bin', { 'accept-encoding': coding })).toBe(200)
    }
    await vi.waitFor(() => expect(sent.length).toBe(8))
    expect(sent.every((result) => result.complete === false)).toBe(true)
    const res = await request(port, '/big.bin', { headers: { 'accept-encoding': 'gzip' } })
    expect(zlib.gunzipSync(res.body).equals(tree.big)).toBe(true)
    await app.close()
    expect(fdsUnder(tree.root)).toEqual([])
  })
})

it('the tree is intact', () => {
  expect(fs.readFileSync(path.join(tree.root, 'big.bin')).equals(tree.big)).toBe(true)
})
