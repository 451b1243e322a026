// `precompressed`: which representation a client gets for its Accept-Encoding
// (RFC 9110 12.5.3 as negotiator reads it: q-values, `*`, identity, case and
// whitespace, invalid q), and `Vary: Accept-Encoding` on every response of a path
// that has a precompressed sibling — 200, 206, 304, 412, 416, HEAD, identity
// fallbacks — and on none of a path that has not. Real servers: serveStatic in
// Express 5 and on node:http, and sendFile.

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, gunzipSync, brotliDecompressSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import express from 'express'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'

const SOURCE = 'console.log("identity")\n'.repeat(40)
const FILES = {
  'both.js': SOURCE,
  'both.js.br': brotliCompressSync(SOURCE),
  'both.js.gz': gzipSync(SOURCE),
  'gz-only.css': SOURCE,
  'gz-only.css.gz': gzipSync(SOURCE),
  'br-only.txt': SOURCE,
  'br-only.txt.br': brotliCompressSync(SOURCE),
  'plain.txt': SOURCE
}

let root, app, serve

// What was sent: the coding the body really is in (checked by decoding it) and
// the headers.
function decoded (answer) {
  const encoding = answer.headers['content-encoding']
  const body = encoding === 'br'
    ? brotliDecompressSync(answer.body)
    : encoding === 'gzip' ? gunzipSync(answer.body) : answer.body
  return body.toString()
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-negotiation-'))
  for (const [name, content] of Object.entries(FILES)) await writeFile(join(root, name), content)
  serve = zcopy.serveStatic(root, { precompressed: true })
  app = await listen(express().use(serve).use((err, req, res, next) => {
    res.status(err.status || 500)
    for (const [name, value] of Object.entries(err.headers || {})) res.setHeader(name, value)
    res.end(`error ${err.status}`)
  }))
})

afterAll(async () => {
  await app.close()
  await serve.close()
  await rm(root, { recursive: true, force: true })
})

function get (path, acceptEncoding, headers = {}, method = 'GET') {
  return request(app.port, path, {
    method,
    headers: acceptEncoding === undefined ? headers : { ...headers, 'accept-encoding': acceptEncoding }
  })
}

// [Accept-Encoding, coding sent for both.js (br and gz siblings)]
const BOTH = [
  [undefined, undefined],
  ['', undefined],
  ['identity', undefined],
  ['gzip', 'gzip'],
  ['br', 'br'],
  ['br, gzip', 'br'],
  ['gzip, br', 'br'], // equal q: the server's order (br), not the header's
  ['gzip, deflate, br, zstd', 'br'], // Chrome's
  ['gzip, deflate', 'gzip'],
  ['deflate', undefined],
  ['br;q=0.1, gzip', 'gzip'],
  ['br;q=0.5, gzip;q=0.5', 'br'],
  ['gzip;q=1.0, br;q=0.999', 'gzip'],
  ['gzip;q=0', undefined],
  ['gzip;q=0, br', 'br'],
  ['br;q=0, gzip', 'gzip'],
  ['br;q=0, gzip;q=0', undefined],
  ['identity, gzip;q=0.5', undefined],
  ['identity;q=0.5, gzip', 'gzip'],
  ['gzip, identity;q=0', 'gzip'],
  ['*', 'br'],
  ['*;q=0.5, gzip', 'gzip'],
  ['*, br;q=0', 'gzip'],
  ['*;q=0', undefined], // nothing acceptable: the file itself, not a 406
  ['identity;q=0', undefined],
  ['GZIP', 'gzip'],
  ['Br', 'br'],
  ['BR;Q=0.1, GZip', 'gzip'],
  ['  gzip ; q=0.8 ,  br ; q=0.9 ', 'br'],
  ['gzip;q=0.8,br;q=0.9', 'br'],
  [',, gzip ,,', 'gzip'],
  ['gzip;q=abc', undefined], // an invalid q accepts nothing
  ['gzip;q=abc, br;q=0.5', 'br'],
  ['gzip;level=9;q=0.5, br;q=0.4', 'gzip'],
  ['compress, x-gzip', undefined]
]

describe('both siblings (both.js, .br, .gz)', () => {
  test.each(BOTH)('Accept-Encoding %o → %s', async (accept, coding) => {
    const answer = await get('/both.js', accept)
    expect(answer.status).toBe(200)
    expect(answer.headers['content-encoding']).toBe(coding)
    expect(answer.headers.vary).toBe('Accept-Encoding')
    expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(decoded(answer)).toBe(SOURCE)
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length)
  })
})

describe('one sibling', () => {
  test.each([
    ['/gz-only.css', 'br, gzip', 'gzip'],
    ['/gz-only.css', 'br', undefined],
    ['/gz-only.css', 'gzip;q=0.1, br', 'gzip'],
    ['/gz-only.css', '*', 'gzip'],
    ['/gz-only.css', undefined, undefined],
    ['/br-only.txt', 'gzip, br', 'br'],
    ['/br-only.txt', 'gzip', undefined],
    ['/br-only.txt', 'br;q=0.1', 'br'], // identity is implicitly at the lowest q given: a tie, br wins
    ['/br-only.txt', 'br;q=0.1, identity', undefined]
  ])('%s, Accept-Encoding %o → %s (Vary either way)', async (path, accept, coding) => {
    const answer = await get(path, accept)
    expect(answer.status).toBe(200)
    expect(answer.headers['content-encoding']).toBe(coding)
    expect(answer.headers.vary).toBe('Accept-Encoding')
    expect(decoded(answer)).toBe(SOURCE)
  })
})

describe('Vary: on every response of a path with variants, on none of a path without', () => {
  const KINDS = {
    '200 identity': { accept: undefined, status: 200 },
    '200 encoded': { accept: 'gzip', status: 200 },
    'HEAD identity': { accept: undefined, status: 200, method: 'HEAD' },
    'HEAD encoded': { accept: 'br', status: 200, method: 'HEAD' },
    '206 identity': { accept: 'identity', status: 206, headers: { range: 'bytes=0-9' } },
    '206 encoded': { accept: 'gzip', status: 206, headers: { range: 'bytes=0-9' } },
    416: { accept: 'gzip, br', status: 416, headers: { range: 'bytes=999999-' } },
    412: { accept: 'gzip, br', status: 412, headers: { 'if-match': '"nope"' } },
    'no variant accepted': { accept: 'deflate', status: 200 }
  }

  test.each(Object.keys(KINDS))('%s', async (kind) => {
    const { accept, status, headers = {}, method } = KINDS[kind]
    for (const path of ['/both.js', '/gz-only.css', '/br-only.txt']) {
      const answer = await get(path, accept, headers, method)
      expect([path, answer.status]).toEqual([path, status])
      expect([path, answer.headers.vary]).toEqual([path, 'Accept-Encoding'])
    }
    const plain = await get('/plain.txt', accept, headers, method)
    expect(plain.status).toBe(status)
    expect(plain.headers.vary).toBeUndefined()
    expect(plain.headers['content-encoding']).toBeUndefined()
  })

  test('304, for the identity and the encoded representation (each its own ETag)', async () => {
    for (const accept of [undefined, 'gzip', 'br']) {
      const first = await get('/both.js', accept)
      const again = await get('/both.js', accept, { 'if-none-match': first.headers.etag })
      expect(again.status).toBe(304)
      expect(again.headers.vary).toBe('Accept-Encoding')
      expect(again.headers['content-encoding']).toBeUndefined()
      expect(again.body.length).toBe(0)
    }
    const etags = await Promise.all([undefined, 'gzip', 'br'].map(async (accept) => (await get('/both.js', accept)).headers.etag))
    expect(new Set(etags).size).toBe(3)
    const plain = await get('/plain.txt')
    const notModified = await get('/plain.txt', 'gzip', { 'if-none-match': plain.headers.etag })
    expect(notModified.status).toBe(304)
    expect(notModified.headers.vary).toBeUndefined()
  })

  test('416 and the 416 error carry Vary through Express\' error handler', async () => {
    const answer = await get('/both.js', 'br', { range: 'bytes=999999-' })
    expect(answer.status).toBe(416)
    expect(answer.headers.vary).toBe('Accept-Encoding')
    expect(answer.headers['content-range']).toBe(`bytes */${FILES['both.js.br'].length}`)
    // The error's body is not the sibling's: no Content-Encoding (412 too).
    expect(answer.headers['content-encoding']).toBeUndefined()
    expect((await get('/both.js', 'br', { 'if-match': '"nope"' })).headers['content-encoding']).toBeUndefined()
  })

  test('added to a Vary the application set, once', async () => {
    const withOrigin = zcopy.serveStatic(root, {
      precompressed: true,
      setHeaders: (res) => { if (!res.hasHeader('Vary')) res.setHeader('Vary', 'Origin') }
    })
    const other = await listen((req, res) => {
      if (req.url.startsWith('/preset')) res.setHeader('Vary', 'accept-encoding')
      req.url = req.url.replace('/preset', '')
      withOrigin(req, res, () => { res.statusCode = 404; res.end() })
    })
    try {
      const answer = await request(other.port, '/both.js', { headers: { 'accept-encoding': 'gzip' } })
      expect(answer.headers.vary).toBe('Origin, Accept-Encoding')
      const plain = await request(other.port, '/plain.txt', { headers: { 'accept-encoding': 'gzip' } })
      expect(plain.headers.vary).toBe('Origin')
      const preset = await request(other.port, '/preset/both.js', { headers: { 'accept-encoding': 'gzip' } })
      expect(preset.headers.vary).toBe('accept-encoding')
      expect(preset.headers['content-encoding']).toBe('gzip')
    } finally {
      await other.close()
      await withOrigin.close()
    }
  })

  test('a sibling added later: the path starts varying at once', async () => {
    const name = 'later.txt'
    await writeFile(join(root, name), SOURCE)
    expect((await get('/' + name, 'gzip')).headers.vary).toBeUndefined()
    await writeFile(join(root, name + '.gz'), gzipSync(SOURCE))
    const answer = await get('/' + name, 'gzip')
    expect(answer.headers.vary).toBe('Accept-Encoding')
    expect(answer.headers['content-encoding']).toBe('gzip')
    expect((await get('/' + name)).headers.vary).toBe('Accept-Encoding')
  })

  test('precompressed off: siblings ignored, no Vary', async () => {
    const off = zcopy.serveStatic(root)
    const server = await listen((req, res) => off(req, res, () => { res.statusCode = 404; res.end() }))
    try {
      const answer = await request(server.port, '/both.js', { headers: { 'accept-encoding': 'br, gzip' } })
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers.vary).toBeUndefined()
      expect(answer.body.toString()).toBe(SOURCE)
    } finally {
      await server.close()
      await off.close()
    }
  })
})

describe('sendFile negotiates the same way', () => {
  let server

  beforeAll(async () => {
    server = await listen((req, res) => {
      zcopy.sendFile(req, res, req.url.slice(1), { root, precompressed: true }).catch((err) => {
        res.statusCode = err.status || 500
        res.end()
      })
    })
  })
  afterAll(() => server.close())

  test.each([
    ['both.js', 'br;q=0.1, gzip', 'gzip', 'Accept-Encoding'],
    ['both.js', 'gzip;q=0', undefined, 'Accept-Encoding'],
    ['both.js', '*', 'br', 'Accept-Encoding'],
    ['both.js', undefined, undefined, 'Accept-Encoding'],
    ['plain.txt', 'br, gzip', undefined, undefined]
  ])('%s, Accept-Encoding %o → %s', async (file, accept, coding, vary) => {
    const answer = await request(server.port, '/' + file, { headers: accept === undefined ? {} : { 'accept-encoding': accept } })
    expect(answer.status).toBe(200)
    expect(answer.headers['content-encoding']).toBe(coding)
    expect(answer.headers.vary).toBe(vary)
    expect(decoded(answer)).toBe(SOURCE)
  })
})

describe('precompressed: a list of codings', () => {
  test("['gzip']: only .gz siblings are sent, and a path with only a .br one does not vary", async () => {
    const gzipOnly = zcopy.serveStatic(root, { precompressed: ['gzip'] })
    const server = await listen(express().use(gzipOnly))
    try {
      const both = await request(server.port, '/both.js', { headers: { 'accept-encoding': 'br, gzip' } })
      expect(both.headers['content-encoding']).toBe('gzip')
      expect(both.headers.vary).toBe('Accept-Encoding')
      expect(decoded(both)).toBe(SOURCE)
      const brOnly = await request(server.port, '/br-only.txt', { headers: { 'accept-encoding': 'br' } })
      expect(brOnly.headers['content-encoding']).toBe(undefined)
      expect(brOnly.headers.vary).toBe(undefined)
      expect(decoded(brOnly)).toBe(SOURCE)
    } finally {
      await server.close()
      await gzipOnly.close()
    }
  })

  test('anything but a boolean or a list of br and gzip is a TypeError', () => {
    for (const [value, shown] of [['yes', "'yes'"], [1, '1'], [['deflate'], "[ 'deflate' ]"], [[true], '[ true ]'], [{}, '{}']]) {
      expect(() => zcopy.serveStatic(root, { precompressed: value })).toThrow(new TypeError(`options.precompressed must be a boolean or an array of 'br', 'gzip', got ${shown}`))
    }
  })
})
