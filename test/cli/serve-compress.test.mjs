// `zcopy serve` compresses text files by default (once per version, in the
// background), says so once at start with its cache folder, logs the encoding
// of each body, removes its variants' folder when it stops; --no-compress
// sends files as they are.

import { afterAll, expect, test } from 'vitest'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { makeRoot, startServe } from './serve-helpers.mjs'

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

test('by default: identity first, then br from the variant; one line at start; the log shows the encoding', async () => {
  const server = await startServe(root, [])
  let answer
  try {
    const first = await get(server.url, 'app.js')
    expect(first.headers['content-encoding']).toBeUndefined()
    expect(first.headers.vary).toBe('Accept-Encoding')
    for (let i = 0; i < 400; i++) { // the variant is made in the server's background
      answer = await get(server.url, 'app.js')
      if (answer.headers['content-encoding'] === 'br') break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(answer.headers['content-encoding']).toBe('br')
    expect(zlib.brotliDecompressSync(answer.body).equals(big)).toBe(true)
    expect((await get(server.url, 'photo.png')).headers['content-encoding']).toBeUndefined()
  } finally {
    const { stdout } = await server.stop()
    const cacheBase = path.join(os.tmpdir(), `zcopy-variants-${process.getuid()}`)
    expect(stdout.split('\n').filter((line) => line.includes('compressing text files'))).toEqual([
      `  compressing text files once each (${['br', ...(typeof zlib.zstdCompress === 'function' ? ['zstd'] : []), 'gzip'].join(', ')}), in the background; larger results kept in ${cacheBase} (--no-compress: off)`
    ])
    expect(stdout).toMatch(new RegExp(`GET /app.js 200 ${answer.body.length} B \\d+\\.\\d ms (memory|zero-copy|stream) br\\n`))
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
