// If-Range (RFC 9110 §13.1.5) over real HTTP, on the file itself, a
// precompressed sibling and a compressed variant: an entity-tag validates a body
// only as the response's whole ETag (never as a substring of the header), and an
// encoded body only by a strong one (strong comparison); the file itself keeps
// send's acceptance of its own weak ETag. A date validates only an exact,
// strong Last-Modified (at least a second old), and never a compressed variant,
// whose Last-Modified is its source's. A validator that fails: the whole body, 200.

import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { text } from '../support/text.mjs'

const SOURCE = text(20000, 'if-range')
const SIBLING = brotliCompressSync(SOURCE)
const PAST = new Date('2026-01-02T03:04:05Z')
const STRONG = '"strong-validator-1"'

let root

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-if-range-'))
  await writeFile(join(root, 'file.js'), SOURCE)
  await writeFile(join(root, 'sib.js'), SOURCE)
  await writeFile(join(root, 'sib.js.br'), SIBLING)
  await writeFile(join(root, 'var.js'), SOURCE)
  await writeFile(join(root, 'fresh.js'), SOURCE)
  for (const name of ['file.js', 'sib.js', 'sib.js.br', 'var.js']) await utimes(join(root, name), PAST, PAST)
})

afterAll(() => rm(root, { recursive: true, force: true }))

async function serverFor (options) {
  const serve = zcopy.serveStatic(root, { fallthrough: false, ...options })
  const server = await listen((req, res) => serve(req, res, (err) => {
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  }))
  const get = (path, headers = {}) => request(server.port, path, { headers })
  return { serve, get, async close () { await server.close(); await serve.close() } }
}

// Asks `path` (with `accept`) for bytes 10-19 under If-Range `ifRange` (a
// function of the full answer's headers) and checks the answer: 206 of those
// bytes of the full body, or the whole body with 200.
async function expectIfRange (get, path, accept, ifRange, status) {
  const full = await get(path, { 'accept-encoding': accept })
  expect(full.status).toBe(200)
  const value = ifRange(full.headers)
  const answer = await get(path, { 'accept-encoding': accept, range: 'bytes=10-19', 'if-range': value })
  expect({ path, accept, ifRange: value, status: answer.status }).toEqual({ path, accept, ifRange: value, status })
  expect(answer.headers['content-encoding']).toBe(full.headers['content-encoding'])
  if (status === 206) {
    expect(answer.headers['content-range']).toBe(`bytes 10-19/${full.body.length}`)
    expect(answer.body.equals(full.body.subarray(10, 20))).toBe(true)
  } else {
    expect(answer.headers['content-range']).toBeUndefined()
    expect(answer.body.equals(full.body)).toBe(true)
  }
  return full
}

const etagOf = (headers) => headers.etag
const lastModifiedOf = (headers) => headers['last-modified']
const containing = (headers) => `"x", ${headers.etag}` // not an entity-tag: contains one
const padded = (headers) => `W/"stale"${headers.etag}`

describe('a precompressed sibling (br)', () => {
  let s
  beforeAll(async () => { s = await serverFor({ precompressed: true }) })
  afterAll(() => s.close())

  test('its own weak ETag in If-Range: the whole body (a weak tag never validates an encoded body)', async () => {
    const full = await expectIfRange(s.get, '/sib.js', 'br', etagOf, 200)
    expect(full.headers['content-encoding']).toBe('br')
    expect(full.headers.etag).toMatch(/^W\//)
    expect(full.body.equals(SIBLING)).toBe(true)
  })

  test('a header that merely contains the ETag: the whole body', async () => {
    await expectIfRange(s.get, '/sib.js', 'br', containing, 200)
    await expectIfRange(s.get, '/sib.js', 'br', padded, 200)
  })

  test('its exact Last-Modified, a second old or more: the range', async () => {
    await expectIfRange(s.get, '/sib.js', 'br', lastModifiedOf, 206)
  })
})

describe('a strong ETag (the application\'s) on an encoded body', () => {
  let s
  beforeAll(async () => {
    s = await serverFor({ precompressed: true, setHeaders: (res) => res.setHeader('ETag', STRONG) })
  })
  afterAll(() => s.close())

  test('an exact strong match: the range of the sibling\'s bytes', async () => {
    const full = await expectIfRange(s.get, '/sib.js', 'br', () => STRONG, 206)
    expect(full.headers['content-encoding']).toBe('br')
  })

  test('the same tag marked weak, or within a longer header: the whole body', async () => {
    await expectIfRange(s.get, '/sib.js', 'br', () => 'W/' + STRONG, 200)
    await expectIfRange(s.get, '/sib.js', 'br', () => `${STRONG}, "other"`, 200)
  })
})

describe('a compressed variant (compress: true)', () => {
  let s, cacheDir
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'zcopy-if-range-cache-'))
    s = await serverFor({ compress: { cacheDir } })
    await s.get('/var.js', { 'accept-encoding': 'br' }) // queues the variant
    await s.serve.compressed()
  })
  afterAll(async () => {
    await s.close()
    await rm(cacheDir, { recursive: true, force: true })
  })

  test('its weak ETag, a header containing it, or the source\'s Last-Modified: the whole variant', async () => {
    const full = await expectIfRange(s.get, '/var.js', 'br', etagOf, 200)
    expect(full.headers['content-encoding']).toBe('br')
    await expectIfRange(s.get, '/var.js', 'br', containing, 200)
    await expectIfRange(s.get, '/var.js', 'br', lastModifiedOf, 200)
  })

  test('a Range without If-Range is still honoured on the variant', async () => {
    const answer = await s.get('/var.js', { 'accept-encoding': 'br', range: 'bytes=10-19' })
    expect([answer.status, answer.headers['content-encoding']]).toEqual([206, 'br'])
  })
})

describe('the file itself (identity)', () => {
  let s
  beforeAll(async () => { s = await serverFor({}) })
  afterAll(() => s.close())

  test('its own weak ETag, exactly: the range (send\'s behaviour, kept)', async () => {
    await expectIfRange(s.get, '/file.js', 'identity', etagOf, 206)
  })

  test('a header that merely contains the ETag: the whole file (send gave the range)', async () => {
    await expectIfRange(s.get, '/file.js', 'identity', containing, 200)
    await expectIfRange(s.get, '/file.js', 'identity', padded, 200)
  })

  test('a date: only the exact Last-Modified, and only once it is a second old', async () => {
    await expectIfRange(s.get, '/file.js', 'identity', lastModifiedOf, 206)
    await expectIfRange(s.get, '/file.js', 'identity', () => new Date(PAST.getTime() + 60_000).toUTCString(), 200)
    // Modified in the current second: Last-Modified is not yet a strong
    // validator. Checked when the answer came within that second (a loaded
    // machine may take longer: then nothing is asserted).
    const now = new Date()
    await utimes(join(root, 'fresh.js'), now, now)
    const full = await s.get('/fresh.js')
    const answer = await s.get('/fresh.js', { range: 'bytes=10-19', 'if-range': full.headers['last-modified'] })
    if (Date.now() < Date.parse(full.headers['last-modified']) + 1000) expect(answer.status).toBe(200)
  })
})
