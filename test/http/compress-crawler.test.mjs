// A crawler asks for every file in turn, again and again. The compression
// cache must not make it recompress for ever (lib/http/compress/store.js):
// a file's record is kept as long as its variant is (before, records were cut
// at max(1,024, maxOpenFiles), their variants with them, and made again on the
// next round); at most `cpuBudget` ms of compression a minute (past it the
// file itself is sent and nothing is queued); and a file whose variant was
// evicted (a cache smaller than what is asked for) is made again at a cheaper
// level. bench/http/compress-crawler.js measures the CPU per round.

import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { listen, request } from '../support/http.mjs'

const require = createRequire(import.meta.url)
const { serveStatic } = require('../../lib/index.js')

const PAGES = 1100 // more than the 1,024 records kept before
let root
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-compress-crawler-'))
  for (let i = 0; i < PAGES; i++) {
    await writeFile(join(root, `p${i}.html`), `<p>page ${i}</p>\n`.repeat(120))
  }
  for (const name of ['a', 'b']) {
    await writeFile(join(root, `${name}.js`), Array.from({ length: 4000 }, (_, n) => `export const ${name}${n} = ${(n * 2654435761) >>> 0};\n`).join(''))
  }
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
  await rm(`${root}-cache`, { recursive: true, force: true })
})

async function serverFor (options) {
  const serve = serveStatic(root, options)
  const app = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  return { serve, app, get: (path, encoding) => request(app.port, path, { headers: { 'accept-encoding': encoding } }) }
}

test('a crawler\'s second round gets every variant made in the first: none made again', async () => {
  const s = await serverFor({ maxOpenFiles: 64, compress: { cacheDir: `${root}-cache`, encodings: ['gzip'] } })
  try {
    for (let from = 0; from < PAGES; from += 50) { // a round, in steps the queue (1,024) holds
      for (let i = from; i < from + 50; i++) expect((await s.get(`/p${i}.html`, 'gzip')).status).toBe(200)
      await s.serve.compressed()
    }
    expect(s.serve.stats().compressed.made).toBe(PAGES)
    for (let i = 0; i < PAGES; i++) {
      const answer = await s.get(`/p${i}.html`, 'gzip')
      expect(answer.headers['content-encoding'], `p${i}.html`).toBe('gzip')
    }
    await s.serve.compressed()
    expect(s.serve.stats().compressed.made).toBe(PAGES)
  } finally {
    await s.app.close()
    await s.serve.close()
  }
}, 120_000)

test('cpuBudget: past it, the file itself is sent and nothing is queued', async () => {
  const s = await serverFor({ compress: { cacheDir: `${root}-cache`, cpuBudget: 1 } })
  try {
    await s.get('/a.js', 'br')
    await s.serve.compressed()
    expect(s.serve.stats().compressed.made).toBe(1) // the budget was left when it was asked for
    expect(s.serve.stats().compressed.cpuMs).toBeGreaterThanOrEqual(1)
    for (let i = 0; i < 3; i++) {
      const answer = await s.get('/b.js', 'br')
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(s.serve.stats().compressed.pending).toBe(0)
      await s.serve.compressed()
    }
    expect(s.serve.stats().compressed.made).toBe(1)
    expect(s.serve.stats().compressed.overBudget).toBe(3)
    expect((await s.get('/a.js', 'br')).headers['content-encoding']).toBe('br') // what was made is sent
  } finally {
    await s.app.close()
    await s.serve.close()
  }
})

test('a file whose variant was evicted is made again at a cheaper level, with an ETag of its own', async () => {
  const sizeOf = (name, quality = 11) => zlib.brotliCompressSync(readFileSync(join(root, name)), {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT }
  }).length
  // Room on disk for one of the two variants (brotli 5's too, a little larger), not both.
  const cacheBytes = sizeOf('a.js', 5) + 100
  expect(cacheBytes).toBeLessThan(sizeOf('a.js') + sizeOf('b.js'))
  const s = await serverFor({ memoryCache: 0, compress: { cacheDir: `${root}-cache`, cacheBytes } })
  try {
    for (const name of ['a.js', 'b.js', 'a.js']) { // b evicts a; a is made again
      await s.get(`/${name}`, 'br')
      await s.serve.compressed()
    }
    const stats = s.serve.stats().compressed
    expect(stats.made).toBe(3)
    expect(stats.evicted).toBe(2)
    expect(stats.cheap).toBe(1)
    const answer = await s.get('/a.js', 'br')
    expect(answer.headers['content-encoding']).toBe('br')
    expect(answer.headers.etag).toMatch(/-br-5"$/)
    expect(zlib.brotliDecompressSync(answer.body).equals(readFileSync(join(root, 'a.js')))).toBe(true)
    expect(answer.body.length).toBeGreaterThan(sizeOf('a.js')) // brotli 5, not 11
  } finally {
    await s.app.close()
    await s.serve.close()
  }
})
