// zcopy/koa as a drop-in for koa-static 5: the cases of koa-static's own suite
// (serve(root) with defer false and true, index, format, methods, upstream and
// downstream answers) and its other options (hidden, gzip, brotli, maxage,
// extensions, setHeaders), on real Koa apps over real sockets. Where zcopy is
// stricter (a path that normalises to another is refused, as Koa routers match
// the raw path), the
// test says so.
import fs from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import zlib from 'node:zlib'
import Koa from 'koa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import serve from 'zcopy/koa'
import { rawExchange, request } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

let root
const servers = []
const middlewares = []

beforeAll(() => {
  root = makeTempDir('zcopy-koa-static-')
  const files = {
    'fixtures/hello.txt': 'world',
    'fixtures/world/index.html': 'html index',
    'index.txt': 'text index',
    'world/index.html': 'html index',
    'page.html': '<p>page</p>',
    '.hidden': 'a dotfile',
    'deep/secret.txt': 'guarded',
    'public/x.txt': 'x',
    'public/100% é #1.txt': 'escaped',
    'gz.txt': 'plain gz',
    'gz.txt.gz': zlib.gzipSync('plain gz'),
    'br.txt': 'plain br',
    'br.txt.br': zlib.brotliCompressSync('plain br')
  }
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), content)
  }
})
afterAll(async () => {
  for (const server of servers) server.close()
  await Promise.all(middlewares.map((m) => m.close()))
  removeTempDir(root)
})

// An app: zcopy/koa over `dir` with `options`, then `more` middleware.
async function app (dir, options, ...more) {
  const koa = new Koa()
  const middleware = serve(path.join(root, dir), options)
  middlewares.push(middleware)
  koa.use(middleware)
  for (const m of more) koa.use(m)
  const server = koa.listen(0, '127.0.0.1')
  servers.push(server)
  await once(server, 'listening')
  const { port } = server.address()
  return (target, init) => request(port, target, init)
}

function text (response) {
  return response.body.toString()
}

for (const defer of [false, true]) {
  describe(`serve(root), defer: ${defer}`, () => {
    test('serves a file (root "." relative to the cwd works too)', async () => {
      const get = await app('fixtures', { defer })
      const res = await get('/hello.txt')
      expect(res.status).toBe(200)
      expect(text(res)).toBe('world')
      const cwd = process.cwd()
      process.chdir(root)
      try {
        const middleware = serve('.', { defer })
        middlewares.push(middleware)
        const koa = new Koa().use(middleware)
        const server = koa.listen(0, '127.0.0.1')
        servers.push(server)
        await once(server, 'listening')
        expect(text(await request(server.address().port, '/index.txt'))).toBe('text index')
      } finally {
        process.chdir(cwd)
      }
    })

    test('a path that is not a file: 404', async () => {
      const get = await app('fixtures', { defer })
      expect((await get('/something')).status).toBe(404)
    })

    test('.index: another name, the default index.html, or false (404, downstream answers)', async () => {
      const txt = await app('.', { defer, index: 'index.txt' })
      const res = await txt('/')
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
      expect(text(res)).toBe('text index')
      const html = await app('.', { defer })
      const world = await html('/world/')
      expect(world.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(text(world)).toBe('html index')
      const none = await app('.', { defer, index: false })
      expect((await none('/world/')).status).toBe(404)
      const downstream = await app('.', { defer, index: false }, (ctx) => { ctx.body = 'oh no' })
      expect(text(await downstream('/world/'))).toBe('oh no')
    })

    test('methods other than GET and HEAD: 404 (downstream decides)', async () => {
      const get = await app('fixtures', { defer })
      const res = await get('/hello.txt', { method: 'POST' })
      expect(res.status).toBe(404)
      const head = await get('/hello.txt', { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers['content-length']).toBe('5')
    })
  })
}

describe('defer', () => {
  test('defer: false: the file is served even when downstream would answer', async () => {
    const get = await app('fixtures', {}, (ctx) => { ctx.body = 'hey' })
    expect(text(await get('/hello.txt'))).toBe('world')
  })

  test('defer: true: downstream answers first, the file only when it did not', async () => {
    const get = await app('fixtures', { defer: true }, (ctx) => { if (ctx.path === '/answered') ctx.body = 'hey' })
    expect(text(await get('/answered'))).toBe('hey')
    expect(text(await get('/hello.txt'))).toBe('world')
    const upstream = await app('fixtures', { defer: true }, (ctx) => { ctx.body = 'hey' })
    expect(text(await upstream('/hello.txt'))).toBe('hey')
  })

  test('defer: true: a status set downstream (204), or an empty body, is left alone', async () => {
    const noContent = await app('fixtures', { defer: true }, (ctx) => { ctx.status = 204 })
    expect((await noContent('/something%%%/')).status).toBe(204)
    const empty = await app('fixtures', { defer: true }, (ctx) => { ctx.body = '' })
    expect((await empty('/something%%%/')).status).toBe(200)
  })

  test('defer: false: a malformed path is a 400 thrown into Koa', async () => {
    const get = await app('fixtures', {})
    expect((await get('/something%%%/')).status).toBe(400)
  })
})

describe('format', () => {
  test('format: true (default): a directory without its slash gets its index, no redirect', async () => {
    for (const options of [{}, { format: true }]) {
      const get = await app('.', { index: 'index.html', ...options })
      const res = await get('/world')
      expect(res.status).toBe(200)
      expect(res.headers.location).toBe(undefined)
      expect(text(res)).toBe('html index')
      expect(text(await get('/world/'))).toBe('html index')
    }
  })

  test('format: false: a directory without its slash is not found; with it, its index', async () => {
    const get = await app('.', { index: 'index.html', format: false })
    expect((await get('/world')).status).toBe(404)
    expect(text(await get('/world/'))).toBe('html index')
  })
})

describe('koa-send options', () => {
  test('hidden: false (default) does not serve dotfiles; true does', async () => {
    expect((await (await app('.', {}))('/.hidden')).status).toBe(404)
    expect(text(await (await app('.', { hidden: true }))('/.hidden'))).toBe('a dotfile')
  })

  test('gzip and brotli (default true): the sibling for clients that accept it, Vary set', async () => {
    const get = await app('.', {})
    const gz = await get('/gz.txt', { headers: { 'accept-encoding': 'gzip' } })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gz.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(gz.headers.vary).toBe('Accept-Encoding')
    expect(zlib.gunzipSync(gz.body).toString()).toBe('plain gz')
    const br = await get('/br.txt', { headers: { 'accept-encoding': 'br, gzip' } })
    expect(br.headers['content-encoding']).toBe('br')
    expect(zlib.brotliDecompressSync(br.body).toString()).toBe('plain br')
    expect(text(await get('/gz.txt'))).toBe('plain gz') // no Accept-Encoding: the file
  })

  test('gzip: false, brotli: false: only the other coding, or none', async () => {
    const noGzip = await app('.', { gzip: false })
    const gz = await noGzip('/gz.txt', { headers: { 'accept-encoding': 'gzip' } })
    expect(gz.headers['content-encoding']).toBe(undefined)
    expect(gz.headers.vary).toBe(undefined)
    expect(text(gz)).toBe('plain gz')
    expect((await noGzip('/br.txt', { headers: { 'accept-encoding': 'br' } })).headers['content-encoding']).toBe('br')
    const noBrotli = await app('.', { brotli: false })
    expect((await noBrotli('/br.txt', { headers: { 'accept-encoding': 'br' } })).headers['content-encoding']).toBe(undefined)
  })

  test('maxage (ms), immutable, extensions with or without the dot, setHeaders(res, path, stats)', async () => {
    const seen = []
    const get = await app('.', {
      maxage: 60_000,
      immutable: true,
      extensions: ['.html'],
      setHeaders: (res, file, stats) => { seen.push([file, stats.size]); res.setHeader('X-Set', 'yes') }
    })
    const res = await get('/page')
    expect(res.status).toBe(200)
    expect(text(res)).toBe('<p>page</p>')
    expect(res.headers['cache-control']).toBe('public, max-age=60, immutable')
    expect(res.headers['x-set']).toBe('yes')
    expect(seen).toEqual([[path.join(root, 'page.html'), 11]])
    expect(text(await (await app('.', { extensions: ['html'] }))('/page'))).toBe('<p>page</p>')
  })

  test('a bad option is a TypeError at creation', () => {
    for (const name of ['defer', 'format', 'hidden', 'gzip', 'brotli']) {
      expect(() => serve(root, { [name]: 'yes' })).toThrow(new TypeError(`options.${name} must be a boolean, got 'yes'`))
    }
    expect(() => serve(root, { extensions: 'html' })).toThrow(TypeError)
    expect(() => serve(root, 'public')).toThrow(new TypeError("options must be an object, got 'public'"))
    expect(() => serve()).toThrow(new TypeError('root path required'))
  })
})

describe('behind a route guard (stricter than koa-static)', () => {
  // A guard on the raw path, as Koa routers match it; each path below normalises
  // to the guarded one. koa-static serves '/./deep/…' and '/public/../deep/…'
  // past such a guard, and refuses an absolute path after the first slash
  // ('//deep/…', '/\deep/…') with 400.
  const REFUSED = {
    403: ['/public/../deep/secret.txt', '/public/%2e%2e/deep/secret.txt', '/public/%2E%2E/deep/secret.txt',
      '/public/.%2e/deep/secret.txt', '/public%2f..%2fdeep/secret.txt', '/public\\..\\deep/secret.txt',
      '/./deep/secret.txt', '/%2e/deep/secret.txt', '/public//../deep/secret.txt', '/public/./../deep/secret.txt',
      '/public\\deep/secret.txt', '/deep%2F..%2F/deep/secret.txt', '/public/x.txt/.',
      // an escape a browser never makes, hiding what the guard matches
      '/%64eep/secret.txt', '/d%65ep/secret.txt', '/deep%2fsecret.txt', '/%64%65%65%70/secret.txt', '/public/x%2etxt'],
    400: ['//deep/secret.txt', '///deep/secret.txt', '/%2Fdeep/secret.txt', '/%2f%2fdeep/secret.txt',
      '/%5Cdeep/secret.txt', '/\\deep/secret.txt', '/C:/deep/secret.txt']
  }

  test('a path that normalises to another (raw or encoded) is refused: it cannot reach what a guard on the raw path protects', async () => {
    const guard = async (ctx, next) => {
      if (ctx.path.startsWith('/deep/')) ctx.throw(401)
      return next()
    }
    const koa = new Koa()
    const middleware = serve(root)
    middlewares.push(middleware)
    koa.use(guard).use(middleware)
    const server = koa.listen(0, '127.0.0.1')
    servers.push(server)
    await once(server, 'listening')
    const { port } = server.address()
    expect((await request(port, '/deep/secret.txt')).status).toBe(401)
    for (const [status, targets] of Object.entries(REFUSED)) {
      for (const target of targets) {
        const raw = (await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n`)).toString('latin1')
        expect(raw, target).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
        expect(raw).not.toContain('guarded')
      }
    }
    expect(text(await request(port, '/public/x.txt'))).toBe('x')
    expect(text(await request(port, '/world/'))).toBe('html index') // a trailing slash is canonical
    // escapes a browser does make: a space, '%', '#', non-ASCII
    expect(text(await request(port, '/public/100%25%20%C3%A9%20%231.txt'))).toBe('escaped')
  })
})
