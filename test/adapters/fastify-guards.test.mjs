// zcopy/fastify behind an app's own route guard: Fastify routes on the raw path,
// so a path that normalises to a guarded one ('..', '.', empty segments, a
// backslash, raw or percent-encoded) must be refused (403), never served past the
// guard; an encoded separator is not found. Raw paths, sent as written.
import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopyFastify from 'zcopy/fastify'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

let tree
const SECRET = '<p>guarded</p>\n'
beforeAll(() => {
  tree = makeTree()
  const deep = path.join(tree.root, 'deep', 'path', 'for', 'test')
  fs.mkdirSync(deep, { recursive: true })
  fs.writeFileSync(path.join(deep, 'foo.html'), SECRET)
  fs.writeFileSync(path.join(tree.root, 'index.html'), '<p>home</p>\n')
  fs.mkdirSync(path.join(tree.root, 'foo'))
})
afterAll(() => removeTempDir(tree.root))

async function start (register, guard) {
  const app = Fastify()
  app.all(guard, async (request, reply) => reply.code(401).send('Unauthorized'))
  register(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address()
  return { app, get: (url) => request(port, url) }
}

describe('an app\'s /deep/* guard', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => {
      a.register(zcopyFastify, { root: tree.root })
      a.get('/send-up', (request, reply) => reply.sendFile('foo/../index.html'))
    }, '/deep/*'))
  })
  afterAll(() => app.close())

  it('holds: the guarded path itself', async () => {
    expect((await get('/deep/path/for/test/foo.html')).status).toBe(401)
  })

  it.each([
    '/foo/../deep/path/for/test/foo.html',
    '/foo/%2e%2e/deep/path/for/test/foo.html',
    '/foo/%2E%2E/deep/path/for/test/foo.html',
    '/foo/.%2e/deep/path/for/test/foo.html',
    '/./deep/path/for/test/foo.html',
    '/%2e/deep/path/for/test/foo.html',
    '//deep/path/for/test/foo.html',
    '/foo//../deep/path/for/test/foo.html',
    '/foo\\..\\deep/path/for/test/foo.html',
    '/%5Cdeep/path/for/test/foo.html',
    '/foo%5C..%5Cdeep/path/for/test/foo.html',
    '/index.html/.'
  ])('refuses %s with 403', async (url) => {
    const res = await get(url)
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body).code).toBe('FST_STATIC_FORBIDDEN_PATH')
    expect(res.body.toString()).not.toContain('guarded')
  })

  it('answers an encoded separator (%2F) with 404', async () => {
    const res = await get('/deep%2Fpath/for/test/foo.html')
    expect(res.status).toBe(404)
    expect(res.body.toString()).not.toContain('guarded')
  })

  it('refuses reply.sendFile(\'foo/../index.html\') with 403', async () => {
    expect((await get('/send-up')).status).toBe(403)
  })
})

describe('under a parametric prefix /app/:version', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => {
      a.register(zcopyFastify, { root: tree.root, prefix: '/app/:version' })
    }, '/app/:version/deep/*'))
  })
  afterAll(() => app.close())

  it('serves below it and holds the guard', async () => {
    expect((await get('/app/1/index.html')).status).toBe(200)
    expect((await get('/app/1/deep/path/for/test/foo.html')).status).toBe(401)
  })

  it.each([
    '/app/1/foo/../deep/path/for/test/foo.html',
    '/app/1/foo/%2e%2e/deep/path/for/test/foo.html',
    '/app/1/foo/%2E%2E/deep/path/for/test/foo.html',
    '/app/%2e%2e/app/1/deep/path/for/test/foo.html',
    '/app/1//deep/path/for/test/foo.html'
  ])('refuses %s with 403', async (url) => {
    const res = await get(url)
    expect(res.status).toBe(403)
    expect(res.body.toString()).not.toContain('guarded')
  })
})

describe('redirect: true, paths a URL parser reads as another host or an upward path', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => {
      a.register(zcopyFastify, { root: tree.root, redirect: true })
    }, '/deep/*'))
  })
  afterAll(() => app.close())

  it.each(['//^/..', '/\\\\a//google.com/%2e%2e%2f%2e%2e', '//foo', '/foo/.'])('%s: 403 or 404, never a redirect', async (url) => {
    const res = await get(url)
    expect([403, 404]).toContain(res.status)
    expect(res.headers.location).toBeUndefined()
  })

  it('a directory still redirects to its trailing slash', async () => {
    const res = await get('/foo?x=1')
    expect(res.status).toBe(301)
    expect(res.headers.location).toBe('/foo/?x=1')
  })
})
