// `compress`: compressed variants made once per file version in the background
// and sent from then on (memory for small ones, the cache folder by sendfile for
// larger ones), on real servers: serveStatic in Express 5 (also behind
// compression()), on HTTPS and HTTP/2, and sendFile. What is compressed, the
// negotiation, headers (Vary, ETag per representation, Content-Length), ranges,
// conditionals, HEAD, determinism, bounds, failures, options.

import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import http2 from 'node:http2'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import express from 'express'
import compression from 'compression'
import zcopy from '../../lib/index.js'
import { fdsUnder, listen, request, tls, untilCoded } from '../support/http.mjs'
import { decode } from '../support/decode.mjs'
import { text } from '../support/text.mjs'

const NATIVE = zcopy.zeroCopyAvailable

async function serverFor (root, options, { withCompression = false } = {}) {
  const sent = []
  const serve = zcopy.serveStatic(root, { onSent: (res, s) => sent.push({ ...s, encoding: res.getHeader('Content-Encoding') }), ...options })
  const app = express()
  if (withCompression) app.use(compression())
  app.use(serve).use((err, req, res, next) => {
    res.status(err.status || 500)
    for (const [name, value] of Object.entries(err.headers || {})) res.setHeader(name, value)
    res.end(`error ${err.status}`)
  })
  const server = await listen(app)
  return { serve, sent, server, get: (path, acceptEncoding, headers = {}, method = 'GET') => request(server.port, path, { method, headers: acceptEncoding === undefined ? headers : { ...headers, 'accept-encoding': acceptEncoding } }), async close () { await server.close(); await serve.close() } }
}

let root, cacheDir
const BIG = text(200 * 1024, 'big') // compressed above 64 KiB? no: text compresses well; see HUGE
const HUGE = Buffer.concat(Array.from({ length: 40 }, (_, i) => text(16 * 1024, `h${i}x`))) // 640 KiB, variants > 64 KiB
const SMALL = text(4000, 'small')

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-compress-'))
  cacheDir = join(root, '..', `${root.split('/').pop()}-cache`)
  await writeFile(join(root, 'app.js'), BIG)
  await writeFile(join(root, 'zs.js'), BIG)
  await writeFile(join(root, 'huge.js'), HUGE)
  await writeFile(join(root, 'small.css'), SMALL)
  await writeFile(join(root, 'tiny.txt'), 'tiny text\n'.repeat(50)) // 500 bytes: below the threshold
  await writeFile(join(root, 'photo.png'), text(8000, 'png')) // not a compressible type
  await writeFile(join(root, 'data.json'), text(5000, 'json'))
  await writeFile(join(root, 'sib.js'), SMALL)
  await writeFile(join(root, 'sib.js.gz'), zlib.gzipSync(SMALL))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
  await rm(cacheDir, { recursive: true, force: true })
})

describe('serveStatic({ compress: true })', () => {
  let s
  beforeAll(async () => { s = await serverFor(root, { compress: { cacheDir } }) })
  afterAll(() => s.close())

  test('first request: the file itself at once, with Vary; then the variant, decoded to the same bytes', async () => {
    const pendingBefore = s.serve.stats().compressed.identityWhilePending
    const first = await s.get('/small.css', 'gzip, deflate, br')
    expect(first.status).toBe(200)
    expect(first.headers['content-encoding']).toBeUndefined()
    expect(first.headers.vary).toBe('Accept-Encoding')
    expect(first.body.equals(SMALL)).toBe(true)
    // Issue 65, item 9: that answer is counted, and onSent says why it was identity.
    expect(s.serve.stats().compressed.identityWhilePending).toBe(pendingBefore + 1)
    expect(s.sent.at(-1)).toMatchObject({ bytes: SMALL.length, variantPending: true })
    await s.serve.compressed()
    const second = await s.get('/small.css', 'gzip, deflate, br')
    expect(s.serve.stats().compressed.identityWhilePending).toBe(pendingBefore + 1)
    expect(s.sent.at(-1).variantPending).toBeUndefined()
    expect(second.headers['content-encoding']).toBe('br')
    expect(second.headers.vary).toBe('Accept-Encoding')
    expect(Number(second.headers['content-length'])).toBe(second.body.length)
    expect(second.body.length).toBeLessThan(SMALL.length / 3)
    expect(decode(second).equals(SMALL)).toBe(true)
    // Deterministic: the bytes brotli 11 makes with the documented parameters.
    expect(second.body.equals(zlib.brotliCompressSync(SMALL, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: SMALL.length }
    }))).toBe(true)
    // An ETag per representation, from the file's size and mtime: the same on every replica.
    const { mtime } = await stat(join(root, 'small.css'))
    expect(second.headers.etag).toBe(`W/"${second.body.length.toString(16)}-${mtime.getTime().toString(16)}-br"`)
    expect(first.headers.etag).not.toBe(second.headers.etag)
    expect(second.headers['last-modified']).toBe(first.headers['last-modified'])
  })

  test('gzip is made for a client that takes only gzip; q-values decide', async () => {
    await s.get('/data.json', 'gzip')
    await s.serve.compressed()
    const gz = await s.get('/data.json', 'gzip')
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gz.body.equals(zlib.gzipSync(await (await import('node:fs/promises')).readFile(join(root, 'data.json')), { level: 9 }))).toBe(true)
    // br preferred but not made yet: the best one ready (gzip) meanwhile, br queued.
    const meanwhile = await s.get('/data.json', 'br, gzip')
    expect(meanwhile.headers['content-encoding']).toBe('gzip')
    await s.serve.compressed()
    expect((await s.get('/data.json', 'br, gzip')).headers['content-encoding']).toBe('br')
    expect((await s.get('/data.json', 'br;q=0.1, gzip')).headers['content-encoding']).toBe('gzip')
    expect((await s.get('/data.json', 'gzip;q=0, br;q=0')).headers['content-encoding']).toBeUndefined()
    expect((await s.get('/data.json', 'identity')).headers['content-encoding']).toBeUndefined()
    const none = await s.get('/data.json')
    expect(none.headers['content-encoding']).toBeUndefined()
    expect(none.headers.vary).toBe('Accept-Encoding') // identity too
    expect((await s.get('/data.json', 'deflate')).headers['content-encoding']).toBeUndefined()
    expect((await s.get('/data.json', '*')).headers['content-encoding']).toBe('br')
  })

  test.skipIf(typeof zlib.zstdCompress !== 'function')('zstd where this Node\'s zlib has it: after br, before gzip', async () => {
    await s.get('/zs.js', 'zstd')
    await s.serve.compressed()
    const zstd = await s.get('/zs.js', 'zstd')
    expect(zstd.headers['content-encoding']).toBe('zstd')
    expect(decode(zstd).equals(BIG)).toBe(true)
    expect((await s.get('/zs.js', 'gzip, zstd')).headers['content-encoding']).toBe('zstd')
    await s.get('/zs.js', 'br, zstd')
    await s.serve.compressed()
    expect((await s.get('/zs.js', 'zstd, br')).headers['content-encoding']).toBe('br')
  })

  test('not compressed: below the threshold, a type that is compressed already; no Vary then', async () => {
    for (const path of ['/tiny.txt', '/photo.png']) {
      await s.get(path, 'br, gzip')
      await s.serve.compressed()
      const again = await s.get(path, 'br, gzip')
      expect(again.headers['content-encoding']).toBeUndefined()
      expect(again.headers.vary).toBeUndefined()
    }
  })

  test('a large variant is written to the cache folder and sent by sendfile', async () => {
    await s.get('/huge.js', 'br')
    await s.serve.compressed()
    const before = s.sent.length
    const answer = await s.get('/huge.js', 'br')
    expect(answer.headers['content-encoding']).toBe('br')
    expect(answer.body.length).toBeGreaterThan(64 * 1024)
    expect(decode(answer).equals(HUGE)).toBe(true)
    const stats = s.serve.stats().compressed
    expect(stats.diskBytes).toBeGreaterThanOrEqual(answer.body.length)
    expect(stats.cacheDir.startsWith(cacheDir)).toBe(true)
    const files = await readdir(stats.cacheDir)
    expect(files.some((name) => name.endsWith('.br'))).toBe(true)
    expect(files.some((name) => name.endsWith('.tmp'))).toBe(false)
    expect(s.sent[before]).toMatchObject({ bytes: answer.body.length, zeroCopy: NATIVE, complete: true, encoding: 'br' })
  })

  test('Range, conditional requests and HEAD on a variant are about its bytes, as with siblings', async () => {
    await s.get('/huge.js', 'br')
    await s.serve.compressed()
    const whole = await s.get('/huge.js', 'br')
    const range = await s.get('/huge.js', 'br', { range: 'bytes=100-199' })
    expect(range.status).toBe(206)
    expect(range.headers['content-encoding']).toBe('br')
    expect(range.headers['content-range']).toBe(`bytes 100-199/${whole.body.length}`)
    expect(range.body.equals(whole.body.subarray(100, 200))).toBe(true)
    expect(range.headers.vary).toBe('Accept-Encoding')
    const notModified = await s.get('/huge.js', 'br', { 'if-none-match': whole.headers.etag })
    expect(notModified.status).toBe(304)
    expect(notModified.headers.vary).toBe('Accept-Encoding')
    // The variant's ETag does not validate the identity representation.
    const identity = await s.get('/huge.js', 'identity', { 'if-none-match': whole.headers.etag })
    expect(identity.status).toBe(200)
    expect(identity.body.equals(HUGE)).toBe(true)
    const failed = await s.get('/huge.js', 'br', { 'if-match': '"other"' })
    expect(failed.status).toBe(412)
    const head = await s.get('/huge.js', 'br', {}, 'HEAD')
    expect(head.headers['content-encoding']).toBe('br')
    expect(head.headers['content-length']).toBe(String(whole.body.length))
    expect(head.body.length).toBe(0)
  })

  test('Vary: Accept-Encoding on every answer for a compressed file (200, 206, 304, 412, 416, HEAD, identity), on none for another', async () => {
    await s.get('/data.json', 'br')
    await s.serve.compressed()
    const kinds = [
      { accept: undefined, status: 200 },
      { accept: 'br', status: 200, encoding: 'br' },
      { accept: 'deflate', status: 200 },
      { accept: 'br', status: 200, method: 'HEAD', encoding: 'br' },
      { accept: 'identity', status: 206, headers: { range: 'bytes=0-9' } },
      { accept: 'br', status: 206, headers: { range: 'bytes=0-9' }, encoding: 'br' },
      { accept: 'br', status: 416, headers: { range: 'bytes=999999-' } },
      { accept: 'br', status: 412, headers: { 'if-match': '"nope"' } }
    ]
    for (const { accept, status, headers = {}, method, encoding } of kinds) {
      const answer = await s.get('/data.json', accept, headers, method)
      expect([accept, answer.status, answer.headers.vary, answer.headers['content-encoding']]).toEqual([accept, status, 'Accept-Encoding', encoding])
      const other = await s.get('/photo.png', accept, headers, method)
      expect([accept, other.status, other.headers.vary]).toEqual([accept, status, undefined])
    }
    for (const accept of [undefined, 'br']) {
      const first = await s.get('/data.json', accept)
      const again = await s.get('/data.json', accept, { 'if-none-match': first.headers.etag })
      expect([accept, again.status, again.headers.vary, again.headers['content-encoding']]).toEqual([accept, 304, 'Accept-Encoding', undefined])
    }
  })

  test('stats() counts made, served and the bytes saved', async () => {
    const before = s.serve.stats().compressed
    await s.get('/app.js', 'br')
    await s.serve.compressed()
    const answer = await s.get('/app.js', 'br')
    const after = s.serve.stats().compressed
    expect(after.made).toBe(before.made + 1)
    expect(after.served).toBe(before.served + 1)
    expect(after.bytesSaved - before.bytesSaved).toBe(BIG.length - answer.body.length)
    expect(after.pending).toBe(0)
  })
})

describe('setHeaders(res, path, stat) on a variant', () => {
  // As express.static: the file's path and the file's stat, whichever
  // representation is sent; not the variant's (a memory variant's size, a disk
  // variant's own inode, size and mtime, the time it was compressed).
  const old = new Date('2020-01-01T00:00:00Z')
  const heard = []
  let s
  beforeAll(async () => {
    s = await serverFor(root, {
      compress: { cacheDir },
      setHeaders (res, path, stat) {
        heard.push({ path, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs })
        res.setHeader('X-Last-Modified', stat.mtime.toUTCString())
      }
    })
  })
  afterAll(() => s.close())

  test.each([
    ['in memory', 'stat-small.js', text(4096, 'statsmall')],
    ['on disk', 'stat-huge.js', HUGE]
  ])('a variant %s: the file\'s path and stat', async (where, name, bytes) => {
    await writeFile(join(root, name), bytes)
    await utimes(join(root, name), old, old)
    const source = await stat(join(root, name))
    const expected = { path: join(root, name), ino: source.ino, size: source.size, mtimeMs: source.mtimeMs }
    const first = await s.get(`/${name}`, 'br')
    expect(first.headers['content-encoding']).toBeUndefined()
    expect(heard.at(-1)).toEqual(expected)
    await s.serve.compressed()
    const answer = await s.get(`/${name}`, 'br')
    expect(answer.headers['content-encoding']).toBe('br')
    expect(answer.body.length > 64 * 1024).toBe(where === 'on disk')
    expect(heard.at(-1)).toEqual(expected)
    expect(answer.headers['x-last-modified']).toBe(old.toUTCString())
    expect(answer.headers['last-modified']).toBe(old.toUTCString())
    // HEAD and a range of the variant too.
    await s.get(`/${name}`, 'br', {}, 'HEAD')
    expect(heard.at(-1)).toEqual(expected)
    const range = await s.get(`/${name}`, 'br', { range: 'bytes=0-9' })
    expect([range.status, range.headers['content-encoding']]).toEqual([206, 'br'])
    expect(heard.at(-1)).toEqual(expected)
  })
})

describe('with precompressed siblings', () => {
  test('a sibling wins: no variant is made for that file', async () => {
    const s = await serverFor(root, { precompressed: true, compress: { cacheDir } })
    try {
      await s.get('/sib.js', 'br, gzip')
      await s.serve.compressed()
      const answer = await s.get('/sib.js', 'br, gzip')
      expect(answer.headers['content-encoding']).toBe('gzip')
      expect(answer.body.equals(zlib.gzipSync(SMALL))).toBe(true)
      expect(s.serve.stats().compressed.made).toBe(0)
      // A file without a sibling is compressed.
      await s.get('/small.css', 'br')
      await s.serve.compressed()
      expect((await s.get('/small.css', 'br')).headers['content-encoding']).toBe('br')
    } finally {
      await s.close()
    }
  })
})

describe('behind Express compression()', () => {
  test('a variant keeps zcopy\'s Content-Encoding and is sent by sendfile; identity is compressed by compression() as before', async () => {
    const s = await serverFor(root, { compress: { cacheDir } }, { withCompression: true })
    try {
      const first = await s.get('/huge.js', 'gzip, deflate, br')
      expect(decode(first).equals(HUGE)).toBe(true) // compression() compressed the identity body
      expect(s.sent[0].zeroCopy).toBe(false)
      await s.serve.compressed()
      const second = await s.get('/huge.js', 'gzip, deflate, br')
      expect(second.headers['content-encoding']).toBe('br')
      expect(Number(second.headers['content-length'])).toBe(second.body.length)
      expect(decode(second).equals(HUGE)).toBe(true)
      expect(s.sent[1]).toMatchObject({ zeroCopy: NATIVE, complete: true, encoding: 'br' })
      const plain = await s.get('/huge.js')
      expect(plain.body.equals(HUGE)).toBe(true)
    } finally {
      await s.close()
    }
  })
})

describe('over TLS and HTTP/2', () => {
  test('the variants decode to the file', async () => {
    const serve = zcopy.serveStatic(root, { compress: { cacheDir } })
    const handler = (req, res) => serve(req, res, () => { res.statusCode = 404; res.end() })
    const h1 = await listen(null, https.createServer(tls, handler))
    const h2 = await listen(null, http2.createSecureServer(tls, handler))
    const h1get = (path) => new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: h1.port, path, ca: tls.cert, agent: false, servername: 'localhost', headers: { 'accept-encoding': 'br' } }, (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
      }).on('error', reject)
    })
    const client = http2.connect(`https://localhost:${h2.port}`, { ca: tls.cert })
    const h2get = (path) => new Promise((resolve, reject) => {
      const stream = client.request({ ':path': path, 'accept-encoding': 'gzip' })
      let headers
      const chunks = []
      stream.on('response', (h) => { headers = h })
      stream.on('data', (c) => chunks.push(c))
      stream.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }))
      stream.on('error', reject)
    })
    try {
      for (const path of ['/huge.js', '/small.css']) {
        await h1get(path)
        await h2get(path)
        await serve.compressed()
        const one = await h1get(path)
        const two = await h2get(path)
        expect(one.headers['content-encoding']).toBe('br')
        expect(two.headers['content-encoding']).toBe('gzip')
        expect(decode(one)).toEqual(decode({ ...two, headers: two.headers }).length === 0 ? null : decode(one))
        const expected = path === '/huge.js' ? HUGE : SMALL
        expect(decode(one).equals(expected)).toBe(true)
        expect(decode(two).equals(expected)).toBe(true)
      }
    } finally {
      client.close()
      await h1.close()
      await h2.close()
      await serve.close()
    }
  })
})

describe('sendFile({ compress })', () => {
  // The first of `get()`'s answers that is gzip (untilCoded).
  const gzipped = (get) => untilCoded(get, 'gzip')

  test('makes and sends variants too', async () => {
    const options = { root, compress: { cacheDir } }
    const app = await listen((req, res) => zcopy.sendFile(req, res, req.url.slice(1), options).catch((err) => { res.statusCode = err.status || 500; res.end() }))
    try {
      const get = () => request(app.port, '/huge.js', { headers: { 'accept-encoding': 'gzip' } })
      expect((await get()).headers['content-encoding']).toBeUndefined()
      const answer = await gzipped(get) // the store is sendFile's own: poll the answers
      expect(answer.headers['content-encoding']).toBe('gzip')
      expect(decode(answer).equals(HUGE)).toBe(true)
    } finally {
      await app.close()
    }
  })

  // A fresh options object per call, as callers often write it: calls with the
  // same settings share one store, so the variant one call queued is sent to a later one.
  test('calls with the same settings share one store', async () => {
    const body = Buffer.concat([HUGE, Buffer.from('// fresh\n')])
    await writeFile(join(root, 'fresh.js'), body)
    const app = await listen((req, res) => zcopy.sendFile(req, res, req.url.slice(1), { root, compress: { cacheDir } })
      .catch((err) => { res.statusCode = err.status || 500; res.end() }))
    try {
      const get = () => request(app.port, '/fresh.js', { headers: { 'accept-encoding': 'gzip' } })
      expect((await get()).headers['content-encoding']).toBeUndefined()
      const answer = await gzipped(get)
      expect(answer.headers['content-encoding']).toBe('gzip')
      expect(decode(answer).equals(body)).toBe(true)
    } finally {
      await app.close()
    }
  })
})

describe('the cache folder', () => {
  test('a base folder that is a symbolic link, writable by others, or another user\'s, is not written into', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'zcopy-elsewhere-'))
    const linked = join(root, '..', `${root.split('/').pop()}-link`)
    const open = join(root, '..', `${root.split('/').pop()}-open`)
    const theirs = join(root, '..', `${root.split('/').pop()}-theirs`)
    await symlink(elsewhere, linked)
    await mkdir(open)
    await chmod(open, 0o777)
    const bases = [linked, open]
    if (process.getuid() === 0) { // root can make a folder another user's (nobody's)
      await mkdir(theirs, { mode: 0o700 })
      await chown(theirs, 65534, 65534)
      bases.push(theirs)
    }
    try {
      for (const base of bases) {
        const s = await serverFor(root, { compress: { cacheDir: base }, memoryCache: 0 })
        await s.get('/huge.js', 'br')
        await s.serve.compressed()
        expect((await s.get('/huge.js', 'br')).headers['content-encoding']).toBe('br')
        const used = s.serve.stats().compressed.cacheDir
        expect(used.startsWith(base + '/')).toBe(false)
        expect(await readdir(elsewhere)).toEqual([])
        expect(await readdir(open)).toEqual([])
        if (bases.includes(theirs)) expect(await readdir(theirs)).toEqual([])
        await s.close()
        expect(existsSync(used)).toBe(false)
      }
    } finally {
      await rm(linked, { force: true })
      await rm(theirs, { recursive: true, force: true })
      await rm(open, { recursive: true, force: true })
      await rm(elsewhere, { recursive: true, force: true })
    }
  })

  test('folders of processes that are gone are removed at start; the own one is private and removed at close', async () => {
    const base = join(root, '..', `${root.split('/').pop()}-stale`)
    await mkdir(base)
    await chmod(base, 0o755) // readable by others is fine: what is inside is 0700
    await mkdir(join(base, 'v-2147483646-abcdef'))
    await writeFile(join(base, 'v-2147483646-abcdef', 'x.br'), 'old')
    const s = await serverFor(root, { compress: { cacheDir: base }, memoryCache: 0 })
    try {
      await s.get('/huge.js', 'gzip')
      await s.serve.compressed()
      const dir = s.serve.stats().compressed.cacheDir
      expect(dir.startsWith(base + '/v-')).toBe(true)
      expect(existsSync(join(base, 'v-2147483646-abcdef'))).toBe(false)
      expect((await stat(dir)).mode & 0o777).toBe(0o700)
      expect((await s.get('/huge.js', 'gzip')).headers['content-encoding']).toBe('gzip')
      await s.server.close()
      await s.serve.close()
      expect(existsSync(dir)).toBe(false)
      expect(fdsUnder(base)).toEqual([])
    } finally {
      await rm(base, { recursive: true, force: true })
    }
  })

  test('a folder that cannot be made: the file itself, one warning, nothing fails', async () => {
    const warnings = []
    const onWarning = (warning) => { if (warning.code === 'ZCOPY_COMPRESS') warnings.push(warning.message) }
    process.on('warning', onWarning)
    const s = await serverFor(root, { compress: { cacheDir: join(root, 'tiny.txt', 'cache') }, memoryCache: 0 })
    try {
      for (const path of ['/huge.js', '/app.js', '/huge.js']) {
        const answer = await s.get(path, 'br')
        expect(answer.status).toBe(200)
        await s.serve.compressed()
      }
      const answer = await s.get('/huge.js', 'br')
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.body.equals(HUGE)).toBe(true)
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.length).toBe(1)
      expect(warnings[0]).toMatch(/ENOTDIR/)
    } finally {
      process.off('warning', onWarning)
      await s.close()
    }
  })

  // Six 192 KiB scripts, each compressing to more than a sixth of 200 KiB:
  // a variant folder bounded at 200 KiB evicts some. → { dir, files }.
  async function boundedFolder () {
    const dir = await mkdtemp(join(tmpdir(), 'zcopy-bound-'))
    const files = []
    for (let i = 0; i < 6; i++) {
      const name = `f${i}.js`
      files.push(name)
      await writeFile(join(dir, name), Buffer.concat(Array.from({ length: 12 }, (_, j) => text(16 * 1024, `f${i}n${j}`))))
    }
    return { dir, files }
  }

  test('bounded: beyond cacheBytes the least recently used variants are removed', async () => {
    const { dir, files } = await boundedFolder()
    const s = await serverFor(dir, { compress: { cacheDir, cacheBytes: 200 * 1024 }, memoryCache: 0 })
    try {
      for (const name of files) {
        await s.get(`/${name}`, 'gzip')
        await s.serve.compressed()
        const stats = s.serve.stats().compressed
        expect(stats.diskBytes).toBeLessThanOrEqual(200 * 1024)
        const onDisk = await readdir(stats.cacheDir)
        let total = 0
        for (const file of onDisk) total += (await stat(join(stats.cacheDir, file))).size
        expect(total).toBe(stats.diskBytes)
      }
      const stats = s.serve.stats().compressed
      expect(stats.made).toBe(6)
      expect(stats.evicted).toBeGreaterThan(0)
      // An evicted variant's file is sent as it is, then made again.
      const answer = await s.get(`/${files[0]}`, 'gzip')
      expect(decode(answer).length).toBeGreaterThan(0)
    } finally {
      await s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  // zcopy serve's native lane sends a variant's later answers itself, and
  // counts them through used() (replay-offer.js): a variant only the lane
  // sends is recently used too, not the first the folder's bound removes.
  test('bounded: a variant answered by onReplayable\'s replays counts as recently used', async () => {
    const { dir, files } = await boundedFolder()
    const offers = new Map() // path → what onReplayable heard of its gzip answer
    const onReplayable = (req, res, answer) => {
      if (res.getHeader('content-encoding') === 'gzip') offers.set(req.url, answer)
    }
    const s = await serverFor(dir, { compress: { cacheDir, cacheBytes: 200 * 1024 }, memoryCache: 0, onReplayable })
    try {
      await s.get('/f0.js', 'gzip')
      await s.serve.compressed()
      expect((await s.get('/f0.js', 'gzip')).headers['content-encoding']).toBe('gzip')
      const replayed = offers.get('/f0.js')
      let dropped = false
      replayed.whenDropped(() => { dropped = true })
      for (const name of files.slice(1)) {
        replayed.used() // the lane sent f0.js's variant again meanwhile
        await s.get(`/${name}`, 'gzip')
        await s.serve.compressed()
      }
      expect(s.serve.stats().compressed.evicted).toBeGreaterThan(0)
      expect(dropped).toBe(false)
      expect((await s.get('/f0.js', 'gzip')).headers['content-encoding']).toBe('gzip')
    } finally {
      await s.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('options', () => {
  test('bad values are a TypeError or a RangeError at creation', () => {
    expect(() => zcopy.serveStatic(root, { compress: 'yes' })).toThrow(TypeError)
    expect(() => zcopy.serveStatic(root, { compress: { level: 3 } })).toThrow(TypeError)
    expect(() => zcopy.serveStatic(root, { compress: { encodings: 'br' } })).toThrow(TypeError)
    expect(() => zcopy.serveStatic(root, { compress: { encodings: ['deflate'] } })).toThrow(RangeError)
    expect(() => zcopy.serveStatic(root, { compress: { threshold: -1 } })).toThrow(RangeError)
    expect(() => zcopy.serveStatic(root, { compress: { threshold: 1.5 } })).toThrow(TypeError)
    expect(() => zcopy.serveStatic(root, { compress: { maxSize: 100, threshold: 1000 } })).toThrow(RangeError)
    expect(() => zcopy.serveStatic(root, { compress: { concurrency: 0 } })).toThrow(RangeError)
    expect(() => zcopy.serveStatic(root, { compress: { cacheDir: 3 } })).toThrow(TypeError)
    expect(() => zcopy.serveStatic(root, { compress: { types: ['nonsense'] } })).toThrow(TypeError)
    expect(() => zcopy.sendFile({}, {}, '/x', { compress: 1 })).toThrow(TypeError)
  })

  test('types, encodings and maxSize narrow what is made', async () => {
    const s = await serverFor(root, { compress: { cacheDir, types: ['image/png'], encodings: ['gzip'], maxSize: 10000 } })
    try {
      for (const path of ['/photo.png', '/small.css', '/app.js']) await s.get(path, 'br, gzip')
      await s.serve.compressed()
      expect((await s.get('/photo.png', 'br, gzip')).headers['content-encoding']).toBe('gzip')
      expect((await s.get('/photo.png', 'br')).headers['content-encoding']).toBeUndefined()
      const css = await s.get('/small.css', 'br, gzip')
      expect(css.headers['content-encoding']).toBeUndefined()
      expect(css.headers.vary).toBeUndefined()
      expect((await s.get('/app.js', 'gzip')).headers['content-encoding']).toBeUndefined() // above maxSize
    } finally {
      await s.close()
    }
  })

  test('off by default: no Vary, nothing made', async () => {
    const s = await serverFor(root, {})
    try {
      await s.get('/small.css', 'br')
      const answer = await s.get('/small.css', 'br')
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers.vary).toBeUndefined()
      expect(s.serve.stats().compressed).toBeUndefined()
    } finally {
      await s.close()
    }
  })
})
