// Small, hot files are kept in memory (within `memoryCache` bytes) and answered
// with one write; everything else stays on the descriptor. Where the body is
// copied anyway (TLS, HTTP/2, no addon) a hot file of up to 1 MiB is kept too.
// onSent tells the two apart (fromMemory); the bytes are checked on every path.

import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request, secureGet, tls } from '../support/http.mjs'

const native = zcopy.zeroCopyAvailable
const files = {
  'small.txt': randomBytes(4096),
  'other.txt': randomBytes(8192),
  'limit.bin': randomBytes(64 * 1024),
  'over.bin': randomBytes(64 * 1024 + 1),
  'mib.bin': randomBytes(1024 * 1024),
  'over-mib.bin': randomBytes(1024 * 1024 + 1)
}

let root, app, sent

beforeEach(async () => {
  root = fs.realpathSync(await mkdtemp(join(tmpdir(), 'zcopy-memory-')))
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(join(root, name), bytes)
  sent = []
})

afterEach(async () => {
  if (app) await app.close()
  app = null
  await rm(root, { recursive: true, force: true })
})

async function serve (options = {}, makeServer = null) {
  const middleware = zcopy.serveStatic(root, { ...options, onSent: (res, result) => sent.push(result) })
  const handler = (req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() })
  app = await listen(handler, makeServer === null ? undefined : makeServer(handler))
  return middleware
}

// Asks `times` times, letting a read into memory finish in between; → the last
// response and how each body went.
async function ask (path, times, headers = {}) {
  let res
  for (let i = 0; i < times; i++) {
    res = await request(app.port, path, { headers })
    await sleep(10)
  }
  return res
}

describe('with the default budget', () => {
  beforeEach(async () => { await serve() })

  test('a small file asked for again is sent from memory, byte for byte', async () => {
    const res = await ask('/small.txt', 4)
    expect(res.body.equals(files['small.txt'])).toBe(true)
    expect(sent.map((s) => s.bytes)).toEqual([4096, 4096, 4096, 4096])
    if (native) expect(sent.map((s) => s.zeroCopy)).toEqual([true, true, false, false])
    // onSent says which bodies came from memory (zcopy serve logs them `memory`).
    expect(sent.map((s) => s.fromMemory === true)).toEqual([false, false, true, true])
  })

  test('64 KiB is small; one byte more is not', async () => {
    expect((await ask('/limit.bin', 3)).body.equals(files['limit.bin'])).toBe(true)
    expect((await ask('/over.bin', 3)).body.equals(files['over.bin'])).toBe(true)
    if (native) expect(sent.map((s) => s.zeroCopy)).toEqual([true, true, false, true, true, true])
  })

  test('ranges, HEAD and 304 from memory', async () => {
    await ask('/small.txt', 2)
    const range = await request(app.port, '/small.txt', { headers: { range: 'bytes=100-1099' } })
    expect(range.status).toBe(206)
    expect(range.body.equals(files['small.txt'].subarray(100, 1100))).toBe(true)
    const suffix = await request(app.port, '/small.txt', { headers: { range: 'bytes=-10' } })
    expect(suffix.body.equals(files['small.txt'].subarray(-10))).toBe(true)
    const head = await request(app.port, '/small.txt', { method: 'HEAD' })
    expect(head.headers['content-length']).toBe('4096')
    expect(head.body.length).toBe(0)
    const again = await request(app.port, '/small.txt', { headers: { 'if-none-match': range.headers.etag } })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
  })

  test('a file rewritten in place is not answered from the old bytes', async () => {
    await ask('/small.txt', 3)
    const next = randomBytes(4096)
    fs.writeFileSync(join(root, 'small.txt'), next)
    await sleep(30)
    expect((await request(app.port, '/small.txt')).body.equals(next)).toBe(true)
  })
})

test('over TLS, a hot file of up to 1 MiB is answered from memory; one byte more is not', async () => {
  const middleware = await serve({}, (handler) => https.createServer(tls, handler))
  for (const name of ['mib.bin', 'over-mib.bin']) {
    for (let i = 0; i < 2; i++) expect((await secureGet(app.port, `/${name}`)).equals(files[name])).toBe(true)
    if (name === 'mib.bin') await expect.poll(() => middleware.stats().memoryBytes, { timeout: 5000, interval: 10 }).toBe(1024 * 1024)
    expect((await secureGet(app.port, `/${name}`)).equals(files[name])).toBe(true)
  }
  expect(sent.map((s) => s.fromMemory === true)).toEqual([false, false, true, false, false, false])
  expect(middleware.stats().memoryBytes).toBe(1024 * 1024)
  expect(sent.every((s) => s.zeroCopy === false && s.complete)).toBe(true)
})

test('one middleware behind HTTPS and HTTP: a 1 MiB file kept for TLS is still sent with sendfile over plain HTTP', async () => {
  const middleware = await serve({}, (handler) => https.createServer(tls, handler))
  const plain = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    for (let i = 0; i < 2; i++) expect((await secureGet(app.port, '/mib.bin')).equals(files['mib.bin'])).toBe(true)
    await expect.poll(() => middleware.stats().memoryBytes, { timeout: 5000, interval: 10 }).toBe(1024 * 1024)
    expect((await request(plain.port, '/mib.bin')).body.equals(files['mib.bin'])).toBe(true)
    expect((await secureGet(app.port, '/mib.bin')).equals(files['mib.bin'])).toBe(true)
    const range = await request(plain.port, '/mib.bin', { headers: { range: 'bytes=70000-' } })
    expect(range.body.equals(files['mib.bin'].subarray(70000))).toBe(true)
  } finally {
    await plain.close()
  }
  await expect.poll(() => sent.length, { timeout: 5000, interval: 10 }).toBe(5) // onSent follows the last byte
  // Without the addon plain HTTP copies the body too, and memory is the better way.
  expect(sent.map((s) => s.fromMemory === true)).toEqual([false, false, !native, true, !native])
  expect(sent.map((s) => s.zeroCopy)).toEqual([false, false, native, false, native])
})

test('over plain HTTP a 1 MiB file stays on the descriptor (sendfile), unless there is no addon', async () => {
  await serve()
  expect((await ask('/mib.bin', 3)).body.equals(files['mib.bin'])).toBe(true)
  expect(sent.map((s) => s.fromMemory === true)).toEqual(native ? [false, false, false] : [false, false, true])
})

test('memoryCache: 0 keeps nothing in memory', async () => {
  await serve({ memoryCache: 0 })
  expect((await ask('/small.txt', 3)).body.equals(files['small.txt'])).toBe(true)
  if (native) expect(sent.map((s) => s.zeroCopy)).toEqual([true, true, true])
})

test('the budget bounds the bytes kept', async () => {
  await serve({ memoryCache: 10_000 })
  await ask('/small.txt', 2) // 4096 kept
  await ask('/other.txt', 2) // 8192 more would pass 10,000: not kept
  sent.length = 0
  expect((await ask('/small.txt', 1)).body.equals(files['small.txt'])).toBe(true)
  expect((await ask('/other.txt', 1)).body.equals(files['other.txt'])).toBe(true)
  if (native) expect(sent.map((s) => s.zeroCopy)).toEqual([false, true])
})

test.each([-1, 1.5, '16mb', null, NaN])('memoryCache %s is a TypeError', (value) => {
  expect(() => zcopy.serveStatic(root, { memoryCache: value })).toThrow(TypeError)
})
