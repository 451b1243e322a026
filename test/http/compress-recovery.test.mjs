// `compress` when what it relies on goes away or is not what it should be: a
// variant's file removed (a cleaner of /tmp, by hand) is made again; the
// store's folder removed is made again; a cache folder that is not private is
// replaced with a warning; without the open-file cache, no variants and a
// warning at creation.

import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { decode } from '../support/decode.mjs'
import { text } from '../support/text.mjs'

// 640 KiB: its gzip variant is above 64 KiB, so on disk.
const LARGE = Buffer.concat(Array.from({ length: 40 }, (_, i) => text(16 * 1024, `r${i}x`)))
const OTHER = Buffer.concat(Array.from({ length: 40 }, (_, i) => text(16 * 1024, `o${i}y`)))

let root, base
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-recovery-'))
  base = await mkdtemp(join(tmpdir(), 'zcopy-recovery-cache-'))
  await writeFile(join(root, 'large.js'), LARGE)
  await writeFile(join(root, 'other.js'), OTHER)
  await writeFile(join(root, 'plain.txt'), 'plain\n')
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
  await rm(base, { recursive: true, force: true })
})

async function serverFor (options) {
  const serve = zcopy.serveStatic(root, options)
  const server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  return {
    serve,
    get: (path, encoding = 'gzip') => request(server.port, path, { headers: { 'accept-encoding': encoding } }),
    async close () { await server.close(); await serve.close() }
  }
}

// Asks for `path` until its variant comes (a variant is made after the first request).
async function variantOf (s, path, encoding = 'gzip') {
  for (let i = 0; i < 3; i++) {
    const answer = await s.get(path, encoding)
    if (answer.headers['content-encoding'] === encoding) return answer
    await s.serve.compressed()
  }
  throw new Error(`no ${encoding} variant of ${path}`)
}

function warningsOf () {
  const messages = []
  const listener = (warning) => { if (warning.code === 'ZCOPY_COMPRESS') messages.push(warning.message) }
  process.on('warning', listener)
  return { messages, stop: () => process.off('warning', listener) }
}

test('a variant\'s file removed: the file itself once, then the variant made again', async () => {
  const cacheDir = await mkdtemp(join(base, 'lost-'))
  // One descriptor at most: asking for another file closes the variant's.
  const s = await serverFor({ compress: { cacheDir, encodings: ['gzip'] }, maxOpenFiles: 1 })
  try {
    expect(decode(await variantOf(s, '/large.js')).equals(LARGE)).toBe(true)
    const folder = s.serve.stats().compressed.cacheDir
    for (const name of await readdir(folder)) await rm(join(folder, name))
    await s.get('/plain.txt')
    const after = await s.get('/large.js')
    expect(after.headers['content-encoding']).toBeUndefined()
    expect(after.body.equals(LARGE)).toBe(true)
    await s.serve.compressed()
    const again = await s.get('/large.js')
    expect(again.headers['content-encoding']).toBe('gzip')
    expect(decode(again).equals(LARGE)).toBe(true)
    expect(s.serve.stats().compressed).toMatchObject({ made: 2, failed: 0 })
  } finally {
    await s.close()
  }
})

test('the store\'s folder removed: made again for the next variant, nothing fails', async () => {
  const cacheDir = await mkdtemp(join(base, 'gone-'))
  const warnings = warningsOf()
  const s = await serverFor({ compress: { cacheDir, encodings: ['gzip'] } })
  try {
    await variantOf(s, '/large.js')
    const first = s.serve.stats().compressed.cacheDir
    await rm(first, { recursive: true })
    const answer = await variantOf(s, '/other.js')
    expect(decode(answer).equals(OTHER)).toBe(true)
    const { cacheDir: second, failed } = s.serve.stats().compressed
    expect(failed).toBe(0)
    expect(second).not.toBe(first)
    expect(existsSync(second)).toBe(true)
    expect(warnings.messages).toEqual([])
  } finally {
    warnings.stop()
    await s.close()
  }
})

test('a cache folder open to other users is not written into: one warning, variants kept elsewhere', async () => {
  const cacheDir = join(base, 'shared')
  await mkdir(cacheDir)
  await chmod(cacheDir, 0o777)
  const warnings = warningsOf()
  const s = await serverFor({ compress: { cacheDir, encodings: ['gzip'] } })
  try {
    expect(decode(await variantOf(s, '/large.js')).equals(LARGE)).toBe(true)
    await new Promise((resolve) => setImmediate(resolve))
    expect(await readdir(cacheDir)).toEqual([])
    const used = s.serve.stats().compressed.cacheDir
    expect(used.startsWith(cacheDir + '/')).toBe(false)
    expect(await s.serve.compressedFolder()).toBe(used)
    expect(warnings.messages.length).toBe(1)
    expect(warnings.messages[0]).toContain(cacheDir)
    expect(warnings.messages[0]).toContain('not a private folder')
  } finally {
    warnings.stop()
    await s.close()
  }
})

test('compress without the open-file cache (maxOpenFiles: 0): a warning at creation, files sent as they are', async () => {
  const warnings = warningsOf()
  const s = await serverFor({ compress: true, maxOpenFiles: 0 })
  try {
    await new Promise((resolve) => setImmediate(resolve))
    expect(warnings.messages).toEqual([expect.stringContaining('maxOpenFiles')])
    for (let i = 0; i < 2; i++) {
      const answer = await s.get('/large.js')
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers.vary).toBeUndefined()
      expect(answer.body.equals(LARGE)).toBe(true)
    }
    expect(s.serve.stats().compressed).toBeUndefined()
    expect(await s.serve.compressedFolder()).toBe(null)
  } finally {
    warnings.stop()
    await s.close()
  }
})
