// `zcopy serve` compresses text files by default (once per version, in the
// background), says so once at start with the cache folder it actually uses
// (not the default one when that is unusable), logs the encoding
// of each body, removes its variants' folder when it stops; --no-compress
// sends files as they are.

import { afterAll, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStdout } from './cli.mjs'
import { untilCoded } from '../support/http.mjs'

const big = Buffer.from(Array.from({ length: 6000 }, (_, i) => `export const v${i} = ${(i * 7919) % 10007} // ${i.toString(36)}\n`).join(''))
const root = makeRoot({ 'app.js': big, 'photo.png': big })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

function get (url, file, acceptEncoding = 'gzip, deflate, br') {
  return new Promise((resolve, reject) => {
    http.get(new URL(file, url), { agent: false, headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
}

// Issue 65, item 9: the first request's identity answer is said at start, in
// the access log (text and JSON) and in stats (identityWhilePending).
test('by default: identity first, then br from the variant; one line at start; the log shows the encoding', async () => {
  const server = await startServe(root, [])
  let answer
  try {
    const first = await get(server.url, 'app.js')
    expect(first.headers['content-encoding']).toBeUndefined()
    expect(first.headers.vary).toBe('Accept-Encoding')
    answer = await untilCoded(() => get(server.url, 'app.js'), 'br') // made in the server's background
    expect(answer.headers['content-encoding']).toBe('br')
    expect(zlib.brotliDecompressSync(answer.body).equals(big)).toBe(true)
    expect((await get(server.url, 'photo.png')).headers['content-encoding']).toBeUndefined()
  } finally {
    const { stdout } = await server.stop()
    const cacheBase = path.join(os.tmpdir(), `zcopy-variants-${process.getuid()}`)
    expect(stdout.split('\n').filter((line) => line.includes('compressing text files'))).toEqual([
      `  compressing text files once each (${['br', ...(typeof zlib.zstdCompress === 'function' ? ['zstd'] : []), 'gzip'].join(', ')}), in the background (the first request of a file gets it uncompressed while its variant is made); larger results kept in ${cacheBase} (--no-compress: off)`
    ])
    expect(stdout).toMatch(new RegExp(`GET /app.js 200 ${answer.body.length} B \\d+\\.\\d ms (memory|zero-copy|stream) br\\n`))
    expect(stdout).toMatch(new RegExp(`GET /app.js 200 ${big.length} B \\d+\\.\\d ms (memory|zero-copy|stream) identity \\(variant pending\\)\\n`))
    // A file that gets no variant (an image) is no pending one.
    expect(stdout).toMatch(new RegExp(`GET /photo.png 200 ${big.length} B \\d+\\.\\d ms (memory|zero-copy|stream)\\n`))
    // Its own folder is gone with it.
    const left = fs.existsSync(cacheBase) ? fs.readdirSync(cacheBase).filter((name) => name.startsWith(`v-${server.cli.child.pid}-`)) : []
    expect(left).toEqual([])
  }
})

test('--no-compress: files as they are, no Vary, nothing said', async () => {
  const server = await startServe(root, ['--no-compress'])
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await get(server.url, 'app.js')
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers.vary).toBeUndefined()
      expect(answer.body.equals(big)).toBe(true)
    }
  } finally {
    const { stdout } = await server.stop()
    expect(stdout).not.toMatch(/compressing/)
  }
})

const ENCODINGS = ['br', ...(typeof zlib.zstdCompress === 'function' ? ['zstd'] : []), 'gzip'].join(', ')

// The default cache folder is <tmpdir>/zcopy-variants-<uid>: the child's TMPDIR
// is a folder of the test's.
test.skipIf(process.getuid() !== 0)('a default cache folder that is another user\'s: the start line names the folder made instead, which is where the variants go', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-serve-tmp-'))
  const foreign = path.join(tmp, `zcopy-variants-${process.getuid()}`)
  fs.mkdirSync(foreign, { mode: 0o700 })
  fs.chownSync(foreign, 65534, 65534)
  // Random hex: its variant (about half its size) is above 64 KiB, so on disk.
  const hex = Buffer.from(crypto.randomBytes(100 * 1024).toString('hex'))
  const site = makeRoot({ 'hex.css': hex })
  const server = await startServe(site, [], { env: { TMPDIR: tmp } })
  try {
    const [line, folder] = await waitForStdout(server.cli, /compressing text files .*; larger results kept in (\S+) \(--no-compress: off\)\n/)
    expect(line).toContain(`compressing text files once each (${ENCODINGS}), in the background (the first request of a file gets it uncompressed while its variant is made);`)
    expect(folder).not.toBe(foreign)
    expect(path.dirname(folder)).toBe(tmp)
    expect(path.basename(folder)).toMatch(/^zcopy-variants-\w{6,}$/)
    const answer = await untilCoded(() => get(server.url, 'hex.css', 'br'), 'br')
    expect(answer.headers['content-encoding']).toBe('br')
    expect(answer.body.length).toBeGreaterThan(64 * 1024)
    // The variant is in the process's own folder inside the one announced;
    // nothing went into the other user's.
    const own = fs.readdirSync(folder).filter((name) => name.startsWith(`v-${server.cli.child.pid}-`))
    expect(own).toHaveLength(1)
    expect(fs.readdirSync(path.join(folder, own[0])).filter((name) => name.endsWith('.br'))).toHaveLength(1)
    expect(fs.readdirSync(foreign)).toEqual([])
    const { stdout } = await server.stop()
    expect(stdout.split('\n').filter((line) => line.includes('compressing text files'))).toHaveLength(1)
    expect(fs.existsSync(folder)).toBe(false) // made for this process: removed with its own folder
  } finally {
    server.cli.child.kill('SIGKILL')
    fs.rmSync(tmp, { recursive: true, force: true })
    fs.rmSync(site, { recursive: true, force: true })
  }
})

test('no cache folder can be made at all: the start line says the variants stay in memory', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-serve-tmp-'))
  const notAFolder = path.join(tmp, 'file')
  fs.writeFileSync(notAFolder, '')
  const server = await startServe(root, ['--log', 'json'], { env: { TMPDIR: notAFolder } })
  try {
    await waitForStdout(server.cli, /"compress":/)
    const { stdout, stderr } = await server.stop()
    const said = stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.compress)
    expect(said).toHaveLength(1)
    expect(said[0].compress).toEqual({ encodings: ENCODINGS.split(', '), cacheDir: null, memoryOnly: true })
    expect(said[0].msg).toBe(`  compressing text files once each (${ENCODINGS}), in the background (the first request of a file gets it uncompressed while its variant is made); results kept in memory only, up to 64 KiB each: no folder could be made in ${path.join(notAFolder, `zcopy-variants-${process.getuid()}`)}, larger files are sent as they are (--no-compress: off)`)
    expect(stderr).toMatch(/ZCOPY_COMPRESS/)
  } finally {
    server.cli.child.kill('SIGKILL')
    fs.rmSync(tmp, { recursive: true, force: true })
  }
})
