// A precompressed sibling that cannot be sent is no sibling: the file itself is
// sent (identity, `Vary: Accept-Encoding` still on it), never a 404 for the file.
// Siblings that link out of the root (refused by confinement), siblings that are
// a directory or a FIFO, and a sibling that vanishes between its lookup and its
// open (a child process renames it away and back while requests run), through
// serveStatic on node:http, zcopy/koa and zcopy/fastify's preCompressed.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import Fastify from 'fastify'
import Koa from 'koa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import zcopy from 'zcopy'
import zcopyFastify from 'zcopy/fastify'
import koaServe from 'zcopy/koa'
import { fdsUnder, listen, request } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const SOURCE = 'console.log("identity")\n'.repeat(40)
const SECRET = 'secret outside the root\n'

let base, root

beforeAll(() => {
  base = makeTempDir('zcopy-sibling-refused-')
  root = join(base, 'root')
  mkdirSync(root)
  writeFileSync(join(base, 'secret.br'), SECRET)
  writeFileSync(join(base, 'secret.gz'), SECRET)
  for (const name of ['br-out.js', 'gz-out.js', 'both-out.js', 'dir.js', 'fifo.js', 'gz-good.js', 'racing.js']) {
    writeFileSync(join(root, name), SOURCE)
  }
  symlinkSync(join(base, 'secret.br'), join(root, 'br-out.js.br'))
  symlinkSync('../secret.gz', join(root, 'gz-out.js.gz'))
  symlinkSync(join(base, 'secret.br'), join(root, 'both-out.js.br'))
  symlinkSync(join(base, 'secret.gz'), join(root, 'both-out.js.gz'))
  mkdirSync(join(root, 'dir.js.br'))
  execFileSync('mkfifo', [join(root, 'fifo.js.br')])
  symlinkSync(join(base, 'secret.br'), join(root, 'gz-good.js.br'))
  writeFileSync(join(root, 'gz-good.js.gz'), gzipSync(SOURCE))
  writeFileSync(join(root, 'racing.js.br'), brotliCompressSync(SOURCE))
})

afterAll(() => removeTempDir(base))

// The body as the client reads it, decoded by its Content-Encoding.
function decoded (answer) {
  const encoding = answer.headers['content-encoding']
  if (encoding === 'br') return brotliDecompressSync(answer.body).toString()
  if (encoding === 'gzip') return gunzipSync(answer.body).toString()
  return answer.body.toString()
}

// [path, Accept-Encoding, coding expected (undefined: identity; null: any), Vary expected:
// a sibling found by its name's stat (a link is followed) makes the path vary;
// a directory or a FIFO is no sibling]
const CASES = [
  ['/br-out.js', 'br', undefined, true],
  ['/br-out.js', 'gzip, deflate, br', undefined, true],
  ['/gz-out.js', 'gzip', undefined, true],
  ['/both-out.js', 'br, gzip', undefined, true],
  ['/dir.js', 'br', undefined, false],
  ['/fifo.js', 'br', undefined, false],
  ['/gz-good.js', 'gzip', 'gzip', true],
  ['/gz-good.js', 'br, gzip', null, true] // the file itself, or its gzip sibling (zcopy/fastify tries the next coding, as @fastify/static)
]

// Every case on the server at `port`: 200, the file's bytes, nothing of the secret.
async function expectFileSent (port) {
  for (const [path, acceptEncoding, coding, vary] of CASES) {
    const answer = await request(port, path, { headers: { 'accept-encoding': acceptEncoding } })
    expect({ path, acceptEncoding, status: answer.status }).toEqual({ path, acceptEncoding, status: 200 })
    if (coding !== null) expect(answer.headers['content-encoding']).toBe(coding)
    expect(decoded(answer)).toBe(SOURCE)
    if (vary) expect(answer.headers.vary).toMatch(/Accept-Encoding/i)
    // Asked again: a remembered path answers the same.
    const again = await request(port, path, { headers: { 'accept-encoding': acceptEncoding } })
    expect(again.status).toBe(200)
    expect(decoded(again)).toBe(SOURCE)
  }
}

describe('a sibling that cannot be sent: the file itself', () => {
  test('serveStatic on node:http', async () => {
    const serve = zcopy.serveStatic(root, { precompressed: true, fallthrough: false })
    const server = await listen((req, res) => serve(req, res, (err) => {
      res.statusCode = err ? err.status || 500 : 404
      res.end()
    }))
    try {
      await expectFileSent(server.port)
      // No descriptor of a refused sibling is kept (the secrets it links to).
      expect(fdsUnder(join(base, 'secret.'))).toEqual([])
    } finally {
      await server.close()
      await serve.close()
    }
  })

  test('zcopy/koa (brotli and gzip siblings by default)', async () => {
    const app = new Koa()
    const middleware = koaServe(root)
    app.use(middleware)
    const server = await listen(app.callback())
    try {
      await expectFileSent(server.port)
    } finally {
      await server.close()
      await middleware.close()
    }
  })

  test('zcopy/fastify preCompressed', async () => {
    const app = Fastify()
    app.register(zcopyFastify, { root, preCompressed: true })
    await app.listen({ port: 0, host: '127.0.0.1' })
    try {
      await expectFileSent(app.server.address().port)
    } finally {
      await app.close()
    }
  })
})

test('a sibling that vanishes between its lookup and its open: the file itself, never a 404', async () => {
  const serve = zcopy.serveStatic(root, { precompressed: true, fallthrough: false })
  const server = await listen((req, res) => serve(req, res, (err) => {
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  }))
  // Renames the sibling away and back for as long as it runs.
  const sibling = join(root, 'racing.js.br')
  const renamer = spawn(process.execPath, ['-e', `
    const fs = require('fs')
    const [a, b] = process.argv.slice(1)
    const end = Date.now() + 60000
    while (Date.now() < end) { fs.renameSync(a, b); fs.renameSync(b, a) }
  `, sibling, sibling + '.away'], { stdio: 'ignore' })
  const statuses = {}
  let sentBr = 0
  try {
    // Until enough answers came from the sibling and the file, or 20 s.
    const end = Date.now() + 20000
    let answers = 0
    while (Date.now() < end && (answers < 3000 || sentBr < 100)) {
      const batch = await Promise.all(Array.from({ length: 8 }, () =>
        request(server.port, '/racing.js', { headers: { 'accept-encoding': 'br' } })))
      for (const answer of batch) {
        statuses[answer.status] = (statuses[answer.status] || 0) + 1
        if (answer.status === 200) {
          expect(decoded(answer)).toBe(SOURCE)
          if (answer.headers['content-encoding'] === 'br') sentBr++
        }
      }
      answers += batch.length
    }
  } finally {
    renamer.kill()
    await once(renamer, 'close')
    await server.close()
    await serve.close()
  }
  expect(Object.keys(statuses)).toEqual(['200'])
  expect(sentBr).toBeGreaterThan(0)
}, 60000)
