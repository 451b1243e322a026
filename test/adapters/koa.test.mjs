// zcopy/koa in a real Koa app on a real socket: Koa's preset 404 does not leak
// into file responses, a miss and other methods fall through to the next
// middleware, errors go through Koa's error handling.
import { once } from 'node:events'
import { createRequire } from 'node:module'
import Koa from 'koa'
import { afterAll, beforeAll, expect, it } from 'vitest'
import serve from 'zcopy/koa'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

let tree
const servers = []
const middlewares = []

beforeAll(() => { tree = makeTree() })
afterAll(async () => {
  for (const server of servers) server.close()
  await Promise.all(middlewares.map((m) => m.close()))
  removeTempDir(tree.root)
})

async function listen (app) {
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await once(server, 'listening')
  return server.address().port
}

function staticMiddleware (options) {
  const middleware = serve(tree.root, options)
  middlewares.push(middleware)
  return middleware
}

// A Koa app: zcopy/koa, then a fallback that records what reached it.
async function app (options, { setup } = {}) {
  const koa = new Koa()
  const reached = []
  const errors = []
  koa.on('error', (err) => errors.push(err))
  if (setup) setup(koa)
  koa.use(staticMiddleware(options))
  koa.use((ctx) => {
    reached.push({ method: ctx.method, path: ctx.path, status: ctx.status })
    if (ctx.path === '/echo') ctx.body = `fallback ${ctx.method}`
  })
  return { port: await listen(koa), reached, errors }
}

it('is importable by package name, CJS and ESM alike', () => {
  const required = createRequire(import.meta.url)('zcopy/koa')
  expect(typeof required).toBe('function')
  expect(required.default).toBe(required)
  expect(typeof serve).toBe('function') // the default import (see packaging.test.mjs for plain Node)
})

it('answers a file with 200 and its bytes, not Koa\'s preset 404', async () => {
  const { port, reached } = await app()
  const res = await request(port, '/big.bin')
  expect(res.status).toBe(200)
  expect(res.body.equals(tree.big)).toBe(true)
  expect(res.headers['content-length']).toBe(String(tree.big.length))
  expect(res.headers['accept-ranges']).toBe('bytes')
  expect(res.headers.etag).toBeTruthy()
  expect(reached).toEqual([])
})

it('HEAD: 200, headers, no body', async () => {
  const { port } = await app()
  const res = await request(port, '/hello.txt', { method: 'HEAD' })
  expect(res.status).toBe(200)
  expect(res.headers['content-length']).toBe('16')
  expect(res.headers['content-type']).toMatch(/^text\/plain/)
  expect(res.body.length).toBe(0)
})

it('Range: 206 with the bytes asked for; unsatisfiable: 416 with Content-Range', async () => {
  const { port } = await app()
  const partial = await request(port, '/big.bin', { headers: { range: 'bytes=1000-1999' } })
  expect(partial.status).toBe(206)
  expect(partial.headers['content-range']).toBe(`bytes 1000-1999/${tree.big.length}`)
  expect(partial.body.equals(tree.big.subarray(1000, 2000))).toBe(true)

  const refused = await request(port, '/big.bin', { headers: { range: `bytes=${tree.big.length + 10}-` } })
  expect(refused.status).toBe(416)
  expect(refused.headers['content-range']).toBe(`bytes */${tree.big.length}`)
})

it('conditional GET: 304 for a matching ETag, 412 for a failed If-Match', async () => {
  const { port } = await app()
  const first = await request(port, '/hello.txt')
  const again = await request(port, '/hello.txt', { headers: { 'if-none-match': first.headers.etag } })
  expect(again.status).toBe(304)
  expect(again.body.length).toBe(0)
  const since = await request(port, '/hello.txt', { headers: { 'if-modified-since': first.headers['last-modified'] } })
  expect(since.status).toBe(304)
  const failed = await request(port, '/hello.txt', { headers: { 'if-match': '"nope"' } })
  expect(failed.status).toBe(412)
})

it('a miss falls through to the next middleware, with Koa\'s 404 still preset', async () => {
  const { port, reached } = await app()
  const res = await request(port, '/echo')
  expect(res.status).toBe(200)
  expect(res.body.toString()).toBe('fallback GET')
  expect(reached).toEqual([{ method: 'GET', path: '/echo', status: 404 }])

  const missing = await request(port, '/nothing-here.txt')
  expect(missing.status).toBe(404)
  expect(missing.body.toString()).toBe('Not Found') // Koa's own 404
})

it('methods other than GET and HEAD fall through, even onto a file', async () => {
  const { port, reached } = await app()
  const res = await request(port, '/hello.txt', { method: 'POST' })
  expect(res.status).toBe(404)
  const echo = await request(port, '/echo', { method: 'DELETE' })
  expect(echo.body.toString()).toBe('fallback DELETE')
  expect(reached.map((r) => r.method)).toEqual(['POST', 'DELETE'])
})

it('answers a directory with its index, with or without the trailing slash (koa-static\'s format: true)', async () => {
  const { port } = await app()
  const bare = await request(port, '/dir?x=1')
  expect(bare.status).toBe(200)
  expect(bare.headers.location).toBe(undefined)
  expect(bare.body.toString()).toBe('<p>index</p>\n')
  const index = await request(port, '/dir/')
  expect(index.status).toBe(200)
  expect(index.body.toString()).toBe('<p>index</p>\n')
})

it('an error (dotfiles: deny → 403) reaches Koa\'s error handling and app.on(\'error\')', async () => {
  const caught = []
  const { port, errors, reached } = await app({ dotfiles: 'deny' }, {
    setup: (koa) => koa.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        caught.push(err.status)
        throw err // on to Koa's default handler
      }
    })
  })
  const res = await request(port, '/.secret')
  expect(res.status).toBe(403)
  expect(res.body.toString()).toBe('Forbidden') // Koa's default error body (expose)
  expect(caught).toEqual([403])
  expect(errors).toHaveLength(1)
  expect(errors[0].status).toBe(403)
  expect(errors[0].expose).toBe(true)
  expect(reached).toEqual([])
})

it('with the default dotfiles (ignore) a dotfile is a miss: next()', async () => {
  const { port, reached } = await app()
  const res = await request(port, '/.secret')
  expect(res.status).toBe(404)
  expect(reached).toHaveLength(1)
})

it('fallthrough: false throws the 404 into Koa instead of calling next()', async () => {
  const { port, reached, errors } = await app({ fallthrough: false })
  const res = await request(port, '/nothing-here.txt')
  expect(res.status).toBe(404)
  expect(reached).toEqual([])
  expect(errors.map((e) => e.status)).toEqual([404])
})

it('a Koa app rendering its own 404 page (ctx.status = 404 + ctx.body) keeps it', async () => {
  const koa = new Koa()
  koa.use(staticMiddleware())
  koa.use((ctx) => {
    ctx.status = 404
    ctx.type = 'html'
    ctx.body = '<h1>custom not found</h1>'
  })
  const port = await listen(koa)
  const missing = await request(port, '/missing.html')
  expect(missing.status).toBe(404)
  expect(missing.body.toString()).toBe('<h1>custom not found</h1>')
  const found = await request(port, '/other/page.html')
  expect(found.status).toBe(200)
  expect(found.body.toString()).toBe('<p>other</p>\n')
})

it('headers set by earlier middleware are kept on the file response', async () => {
  const koa = new Koa()
  koa.use(async (ctx, next) => {
    ctx.set('X-Before', 'yes')
    await next()
  })
  koa.use(staticMiddleware())
  const port = await listen(koa)
  const res = await request(port, '/hello.txt')
  expect(res.status).toBe(200)
  expect(res.headers['x-before']).toBe('yes')
})

it('keep-alive: several files, 304s and misses on one connection', async () => {
  const { port } = await app()
  const { default: http } = await import('node:http')
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const get = (p, headers = {}) => request(port, p, { agent, headers })
  for (let i = 0; i < 3; i++) {
    const file = await get('/big.bin')
    expect(file.body.equals(tree.big)).toBe(true)
    expect((await get('/hello.txt', { 'if-none-match': file.headers.etag })).status).toBe(200)
    expect((await get('/echo')).body.toString()).toBe('fallback GET')
  }
  agent.destroy()
})

it('serve(root, null) means the defaults; a missing root throws', () => {
  expect(typeof serve(tree.root, null)).toBe('function')
  expect(() => serve()).toThrow(TypeError)
})
