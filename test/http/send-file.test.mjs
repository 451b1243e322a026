// zcopy.sendFile on a plain node:http server: one request, one file.

import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { FILES, makeTree } from '../fixtures/http/tree.mjs'

let tree

beforeAll(async () => {
  tree = await makeTree()
})

afterAll(() => tree.cleanup())

// Serves what `respond(req, res)` does; a rejection is answered with its status
// and reported in the X-Error header.
async function withServer (respond, run) {
  const app = await listen((req, res) => {
    Promise.resolve(respond(req, res)).catch((err) => {
      res.statusCode = err.status || 500
      res.setHeader('X-Error', `${err.name}: ${err.status}`)
      for (const [name, value] of Object.entries(err.headers || {})) res.setHeader(name, value)
      res.end()
    })
  })
  try {
    await run(app.port)
  } finally {
    await app.close()
  }
}

test('an absolute path: status, headers, body; HEAD has headers only', async () => {
  const file = join(tree.root, 'ünïcødé ✓.txt')
  await withServer((req, res) => zcopy.sendFile(req, res, file), async (port) => {
    const answer = await request(port, '/')
    expect(answer.status).toBe(200)
    expect(answer.body.toString()).toBe(FILES['ünïcødé ✓.txt'])
    expect(answer.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(Buffer.byteLength(FILES['ünïcødé ✓.txt'])),
      'accept-ranges': 'bytes',
      'cache-control': 'public, max-age=0'
    })
    expect(answer.headers.etag).toMatch(/^W\/"/)
    expect(answer.headers['last-modified']).toBeDefined()
    const head = await request(port, '/', { method: 'HEAD' })
    expect(head.headers['content-length']).toBe(answer.headers['content-length'])
    expect(head.body.length).toBe(0)
  })
})

test('a path relative to options.root; options shape the headers', async () => {
  const options = { root: tree.root, maxAge: '2h', immutable: true, etag: false, lastModified: false, acceptRanges: false }
  await withServer((req, res) => zcopy.sendFile(req, res, decodeURIComponent(req.url.slice(1)), options), async (port) => {
    const answer = await request(port, '/dir/plain.txt')
    expect(answer.body.toString()).toBe(FILES['dir/plain.txt'])
    expect(answer.headers['cache-control']).toBe('public, max-age=7200, immutable')
    expect(answer.headers.etag).toBeUndefined()
    expect(answer.headers['last-modified']).toBeUndefined()
    expect(answer.headers['accept-ranges']).toBeUndefined()
    const ignoredRange = await request(port, '/dir/plain.txt', { headers: { range: 'bytes=0-1' } })
    expect(ignoredRange.status).toBe(200)
  })
})

test('rejections carry the status; nothing is sent before the caller answers', async () => {
  await withServer((req, res) => zcopy.sendFile(req, res, decodeURIComponent(req.url.slice(1)), { root: tree.root }), async (port) => {
    // as send: the fs error itself for a missing file, http-errors' for a directory
    expect((await request(port, '/nope.txt')).headers['x-error']).toBe('Error: 404')
    expect((await request(port, '/dir')).headers['x-error']).toBe('NotFoundError: 404')
    expect((await request(port, '/dir/')).status).toBe(200) // its index.html
    expect((await request(port, '/.hidden')).status).toBe(404)
    const unsatisfiable = await request(port, '/hello.txt', { headers: { range: 'bytes=100-' } })
    expect(unsatisfiable.status).toBe(416)
    expect(unsatisfiable.headers['content-range']).toBe('bytes */12')
    const failed = await request(port, '/hello.txt', { headers: { 'if-match': '"other"' } })
    expect(failed.status).toBe(412)
  })
})

test('a status the application chose is kept (a custom 404 page), and never turned into 304', async () => {
  const page = join(tree.root, 'page.html')
  await withServer((req, res) => {
    res.statusCode = 404
    return zcopy.sendFile(req, res, page)
  }, async (port) => {
    const answer = await request(port, '/')
    expect(answer.status).toBe(404)
    expect(answer.body.toString()).toBe(FILES['page.html'])
    const conditional = await request(port, '/', { headers: { 'if-none-match': answer.headers.etag } })
    expect(conditional.status).toBe(404)
  })
})

test('headers already sent: a 500 rejection, the response left alone', async () => {
  let attempt
  await withServer((req, res) => {
    res.writeHead(200, { 'content-length': '2' })
    res.write('ok')
    attempt = zcopy.sendFile(req, res, join(tree.root, 'hello.txt')).finally(() => res.end())
    attempt.catch(() => {}) // asserted below, perhaps after it settled
  }, async (port) => {
    expect((await request(port, '/')).body.toString()).toBe('ok')
    await expect(attempt).rejects.toMatchObject({ status: 500 })
  })
})

test('argument checks throw at once: TypeErrors, with a code for the path (as pipeFile and res.sendFile)', async () => {
  const req = { method: 'GET', headers: {} }
  expect(() => zcopy.sendFile(req, {}, 'relative.txt')).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' }))
  expect(() => zcopy.sendFile(req, {}, 42)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
  expect(() => zcopy.sendFile(req, {}, '/x', { dotfiles: 'sometimes' })).toThrow(TypeError)
  expect(() => zcopy.serveStatic()).toThrow('root path required')
  expect(() => zcopy.serveStatic(tree.root, { setHeaders: 'nope' })).toThrow(TypeError)
  expect(() => zcopy.serveStatic(tree.root, { maxOpenFiles: -1 })).toThrow(TypeError)
})
