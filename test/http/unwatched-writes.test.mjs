// A file under the root can change with no event in the folders zcopy watches:
// written through a hard link whose other name is in a folder nobody watches,
// through mmap, by another host. Its remembered entry (answered with no stat)
// is proven again by an fstat of its descriptor at most once a second
// (OpenFileCache.isCurrent()): the change is served within that interval, with
// its own ETag and Content-Length, for as long as requests keep coming; a
// response that finds the file shorter than its header said is cut, never
// padded, and the next request gets the new version. Before, the entry was
// served from memory or its descriptor for as long as it was asked for: old
// bytes and ETag, or a Content-Length of 300,000 over 150,000 bytes.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, linkSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { brotliDecompressSync } from 'node:zlib'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
import { listen } from '../support/http.mjs'

const require = createRequire(import.meta.url)
const { serveStatic } = require('../../lib/index.js')

// Within this long the new version must be served: the interval is 1 s; the
// rest is room for a loaded CI machine. The code before served the old one for
// as long as it was asked for.
const SEEN_WITHIN_MS = 8000

let dir, root, elsewhere, app, serve
beforeAll(() => {
  dir = makeTempDir('zcopy-unwatched-')
  root = join(dir, 'root')
  elsewhere = join(dir, 'elsewhere') // no file under it is served: never watched
  mkdirSync(root)
  mkdirSync(elsewhere)
})
afterAll(() => removeTempDir(dir))
afterEach(async () => {
  if (app) await app.close()
  if (serve) await serve.close()
  app = serve = null
})

async function start (options) {
  serve = serveStatic(root, options)
  app = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
}

// One GET; never rejects on a cut body: → { status, headers, body, complete }.
function get (path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: app.port, path, headers, agent: false }, (res) => {
      const chunks = []
      let complete = false
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => { complete = true })
      res.on('error', () => {})
      res.on('close', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), complete: complete && res.complete }))
    })
    req.on('error', reject)
  })
}

const digest = (bytes) => createHash('sha256').update(bytes).digest('hex')

function bytesOf (size, seed) {
  const out = Buffer.alloc(size)
  for (let i = 0; i < size; i++) out[i] = 97 + ((i * 7 + seed) % 26)
  return out
}

// A file served at `name` that is a hard link to one in `elsewhere`.
function linkedPair (name, bytes) {
  const other = join(elsewhere, name)
  writeFileSync(other, bytes)
  linkSync(other, join(root, name))
  return other
}

// Asks for `path` every 50 ms until a response carries `expected` (decoded by
// `decode`) with an ETag other than `oldTag`, checking every response on the
// way: a complete body is the old or the new version and as long as its
// Content-Length; once the new version was served, nothing older is.
// → how long it took (ms).
async function servedWithin (path, { old, expected, oldTag, headers, decode = (r) => r.body }) {
  const started = performance.now()
  let seenNew = false
  while (performance.now() - started < SEEN_WITHIN_MS) {
    const answer = await get(path, headers)
    expect(answer.status).toBe(200)
    if (answer.complete) {
      expect(answer.body.length).toBe(Number(answer.headers['content-length']))
      const body = decode(answer)
      const kind = digest(body) === digest(expected) ? 'new' : digest(body) === digest(old) ? 'old' : 'other'
      expect(kind).not.toBe('other')
      if (seenNew) expect([kind, answer.headers.etag === oldTag]).toEqual(['new', false])
      if (kind === 'new' && answer.headers.etag !== oldTag) seenNew = true
      if (seenNew) return performance.now() - started
    }
    await sleep(50)
  }
  throw new Error(`${path}: still the old version after ${SEEN_WITHIN_MS} ms of requests`)
}

test('a small file (kept in memory) written through a hard link elsewhere is served anew within the interval', async () => {
  const old = bytesOf(20_000, 1)
  const other = linkedPair('small.txt', old)
  await start()
  let first
  for (let i = 0; i < 5; i++) first = await get('/small.txt') // remembered, then kept in memory
  expect(first.body.equals(old)).toBe(true)
  const expected = bytesOf(20_000, 2)
  await sleep(30) // a later mtime than the first write's, whatever the clock's grain
  writeFileSync(other, expected) // the same inode: no event in root
  const took = await servedWithin('/small.txt', { old, expected, oldTag: first.headers.etag })
  expect(took).toBeLessThan(SEEN_WITHIN_MS)
})

test('a file grown through a hard link elsewhere gets its new length and ETag', async () => {
  const old = bytesOf(300_000, 3)
  const other = linkedPair('grown.bin', old)
  await start()
  let first
  for (let i = 0; i < 3; i++) first = await get('/grown.bin')
  appendFileSync(other, bytesOf(1000, 4))
  const expected = Buffer.concat([old, bytesOf(1000, 4)])
  await servedWithin('/grown.bin', { old, expected, oldTag: first.headers.etag })
})

test('a file cut short through a hard link elsewhere: a response that finds it shorter is cut, and the next one is the new file', async () => {
  const old = bytesOf(300_000, 5)
  const other = linkedPair('shrunk.bin', old)
  await start()
  let first
  for (let i = 0; i < 3; i++) first = await get('/shrunk.bin')
  await sleep(30) // a later mtime than the first write's, whatever the clock's grain
  truncateSync(other, 150_000)
  const expected = old.subarray(0, 150_000)
  const started = performance.now()
  for (;;) {
    expect(performance.now() - started).toBeLessThan(SEEN_WITHIN_MS)
    const answer = await get('/shrunk.bin')
    if (answer.headers['content-length'] === '150000') {
      expect(answer.complete).toBe(true)
      expect(answer.body.equals(expected)).toBe(true)
      expect(answer.headers.etag).not.toBe(first.headers.etag)
      return
    }
    expect(answer.headers['content-length']).toBe('300000')
    if (answer.complete) {
      // The old version whole, from memory (where bodies are copied anyway and
      // a file this size is kept): consistent, until the interval is over.
      expect(answer.body.equals(old)).toBe(true)
      await sleep(50)
      continue
    }
    // From the descriptor: sent until the file ends, then the connection closes.
    expect(answer.body.length).toBeLessThanOrEqual(150_000)
    expect(answer.body.equals(old.subarray(0, answer.body.length))).toBe(true)
    // The entry went with that response: the next one is the new file.
    const next = await get('/shrunk.bin')
    expect([next.complete, next.headers['content-length']]).toEqual([true, '150000'])
    expect(next.body.equals(expected)).toBe(true)
    expect(next.headers.etag).not.toBe(first.headers.etag)
    return
  }
})

test('a precompressed sibling written through a hard link elsewhere is served anew', async () => {
  const plain = bytesOf(40_000, 6)
  writeFileSync(join(root, 'page.html'), plain)
  const { brotliCompressSync } = await import('node:zlib')
  const old = plain
  const oldBr = brotliCompressSync(old)
  const other = linkedPair('page.html.br', oldBr)
  await start({ precompressed: true })
  const headers = { 'accept-encoding': 'br' }
  let first
  for (let i = 0; i < 3; i++) first = await get('/page.html', headers)
  expect(first.headers['content-encoding']).toBe('br')
  // The sibling now holds another text (as a build writing it in place would).
  const expected = bytesOf(40_000, 7)
  writeFileSync(other, brotliCompressSync(expected))
  await servedWithin('/page.html', { old, expected, oldTag: first.headers.etag, headers, decode: (r) => brotliDecompressSync(r.body) })
})

test('with compression on, a file written through a hard link elsewhere is not answered with the old variant', async () => {
  const old = Buffer.from(Array.from({ length: 6000 }, (_, i) => `line ${i} of the first version\n`).join(''))
  const other = linkedPair('app.js', old)
  await start({ compress: { cacheDir: join(dir, 'variants') } })
  const headers = { 'accept-encoding': 'br' }
  await get('/app.js', headers)
  await serve.compressed()
  const first = await get('/app.js', headers)
  expect(first.headers['content-encoding']).toBe('br')
  const expected = Buffer.from(Array.from({ length: 6000 }, (_, i) => `line ${i} of the second one\n`).join(''))
  writeFileSync(other, expected)
  const decode = (r) => r.headers['content-encoding'] === 'br' ? brotliDecompressSync(r.body) : r.body
  await servedWithin('/app.js', { old, expected, oldTag: first.headers.etag, headers, decode })
})

let python = false
try {
  execFileSync('python3', ['-c', 'import mmap'], { stdio: 'ignore' })
  python = true
} catch {}

test.skipIf(!python)('a file written through mmap (by another process) is served anew', async () => {
  const old = bytesOf(30_000, 8)
  const file = join(root, 'mapped.bin')
  writeFileSync(file, old)
  await start()
  let first
  for (let i = 0; i < 5; i++) first = await get('/mapped.bin')
  await sleep(30)
  // A shared mapping written and synced: mtime moves (the kernel's
  // page_mkwrite), no inotify event is sent.
  execFileSync('python3', ['-c', `
import mmap, sys
with open(sys.argv[1], 'r+b') as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:5] = b'ZCOPY'
    m.flush()
    m.close()
`, file])
  const expected = Buffer.concat([Buffer.from('ZCOPY'), old.subarray(5)])
  await servedWithin('/mapped.bin', { old, expected, oldTag: first.headers.etag })
})
