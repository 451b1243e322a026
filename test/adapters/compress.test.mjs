// `compress` through zcopy/koa and zcopy/fastify, under each one's conventions:
// the option passes as serveStatic's; a file's first answer is the file itself,
// later ones the variant, which koa-compress and @fastify/compress leave alone
// (zcopy's own Content-Encoding), sent by zcopy.

import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import Koa from 'koa'
import koaCompress from 'koa-compress'
import Fastify from 'fastify'
import fastifyCompress from '@fastify/compress'
import { afterAll, beforeAll, expect, test } from 'vitest'
import serve from 'zcopy/koa'
import zcopyFastify from 'zcopy/fastify'

const big = Buffer.from(Array.from({ length: 20000 }, (_, i) => `export const v${i} = ${(i * 7919) % 10007} // ${(i * 31).toString(36)}\n`).join(''))
let root, cacheDir

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-adapters-compress-'))
  cacheDir = root + '-cache'
  fs.writeFileSync(path.join(root, 'app.js'), big)
  fs.writeFileSync(path.join(root, 'small.css'), big.subarray(0, 20000))
})
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(cacheDir, { recursive: true, force: true })
})

function get (port, file, acceptEncoding = 'gzip, deflate, br') {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: file, agent: false, headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
}

function decode ({ headers, body }) {
  if (headers['content-encoding'] === 'br') return zlib.brotliDecompressSync(body)
  if (headers['content-encoding'] === 'gzip') return zlib.gunzipSync(body)
  return body
}

// Asks until the answer is the br variant (it is made in the background).
async function untilVariant (port, file) {
  for (let i = 0; i < 800; i++) {
    const answer = await get(port, file)
    if (answer.headers['content-encoding'] === 'br' && answer.headers['content-length'] !== undefined) return answer
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('no variant')
}

for (const [name, withCompression] of [['alone', false], ['behind koa-compress', true]]) {
  test(`zcopy/koa ${name}: the file first, then the variant`, async () => {
    const app = new Koa()
    if (withCompression) app.use(koaCompress({ threshold: 1024 }))
    const middleware = serve(root, { compress: { cacheDir } })
    app.use(middleware)
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address()
    try {
      for (const file of ['/app.js', '/small.css']) {
        const first = await get(port, file)
        expect(decode(first).equals(fs.readFileSync(path.join(root, file)))).toBe(true)
        expect(first.headers.vary).toMatch(/Accept-Encoding/)
        await middleware.compressed()
        const answer = await untilVariant(port, file)
        expect(Number(answer.headers['content-length'])).toBe(answer.body.length)
        expect(decode(answer).equals(fs.readFileSync(path.join(root, file)))).toBe(true)
      }
      expect(middleware.stats().compressed.made).toBe(2)
    } finally {
      server.close()
      server.closeAllConnections()
      await middleware.close()
    }
  })
}

for (const [name, withCompression] of [['alone', false], ['behind @fastify/compress', true]]) {
  test(`zcopy/fastify ${name}: the file first, then the variant; reply.sendFile too`, async () => {
    const fastify = Fastify()
    if (withCompression) await fastify.register(fastifyCompress, { global: true, threshold: 1024 })
    await fastify.register(zcopyFastify, { root, prefix: '/static/', compress: { cacheDir } })
    fastify.get('/send', (req, reply) => reply.sendFile('small.css'))
    await fastify.listen({ port: 0, host: '127.0.0.1' })
    const { port } = fastify.server.address()
    try {
      for (const file of ['/static/app.js', '/send']) {
        const expected = fs.readFileSync(path.join(root, file === '/send' ? 'small.css' : 'app.js'))
        const first = await get(port, file)
        expect(decode(first).equals(expected)).toBe(true)
        const answer = await untilVariant(port, file)
        expect(Number(answer.headers['content-length'])).toBe(answer.body.length)
        expect(decode(answer).equals(expected)).toBe(true)
        expect(answer.headers.vary).toMatch(/Accept-Encoding/)
      }
    } finally {
      await fastify.close()
    }
  })
}
