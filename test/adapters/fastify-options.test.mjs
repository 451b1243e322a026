// zcopy/fastify's options, named and defaulting as @fastify/static's, on real
// Fastify servers: registration errors, roots, setHeaders, preCompressed,
// wildcard: false, download, serve: false, allowedPath, list, prefixes,
// constraints, per-call options.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import zcopy from 'zcopy'
import zcopyFastify from 'zcopy/fastify'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

let tree
const PAGE = '<p>page, uncompressed</p>\n'
beforeAll(() => {
  tree = makeTree()
  const packed = path.join(tree.root, 'packed')
  fs.mkdirSync(packed)
  fs.writeFileSync(path.join(packed, 'page.html'), PAGE)
  fs.writeFileSync(path.join(packed, 'page.html.br'), zlib.brotliCompressSync(PAGE))
  fs.writeFileSync(path.join(packed, 'page.html.gz'), zlib.gzipSync(PAGE))
  fs.writeFileSync(path.join(packed, 'page.html.deflate'), zlib.deflateSync(PAGE))
  fs.writeFileSync(path.join(packed, 'plain.txt'), 'no siblings\n')
  fs.mkdirSync(path.join(tree.root, 'second'))
  fs.writeFileSync(path.join(tree.root, 'second', 'only-here.txt'), 'second root\n')
  fs.writeFileSync(path.join(tree.root, 'second', 'hello.txt'), 'shadowed\n')
  fs.mkdirSync(path.join(tree.root, '.well-known'))
  fs.writeFileSync(path.join(tree.root, '.well-known', 'security.txt'), 'contact\n')
})
afterAll(() => removeTempDir(tree.root))

// A listening app built by `setup`; → { app, get(url, options) }.
async function start (setup) {
  const app = Fastify()
  setup(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address()
  return { app, get: (url, options) => request(port, url, options) }
}

describe('registration errors reject ready(), without the plugin timeout', () => {
  const ready = async (setup) => {
    const app = Fastify()
    setup(app)
    try {
      await app.ready()
      return null
    } catch (err) {
      return err
    } finally {
      await app.close().catch(() => {})
    }
  }

  it('a route already there for GET /*', async () => {
    const err = await ready((app) => {
      app.get('/*', async () => 'mine')
      app.register(zcopyFastify, { root: tree.root })
    })
    expect(err).not.toBeNull()
    expect(err.code).not.toBe('FST_ERR_PLUGIN_TIMEOUT')
  })

  it('sendFile decorated twice', async () => {
    const err = await ready((app) => {
      app.register(zcopyFastify, { root: tree.root })
      app.register(zcopyFastify, { root: tree.root, prefix: '/other/' })
    })
    expect(err).not.toBeNull()
    expect(err.code).toBe('FST_ERR_DEC_ALREADY_PRESENT')
  })

  it('an onRoute hook that throws', async () => {
    const err = await ready((app) => {
      app.addHook('onRoute', () => { throw new Error('no routes today') })
      app.register(zcopyFastify, { root: tree.root })
    })
    expect(err && err.message).toBe('no routes today')
  })

  it.each([
    [{}, 'FST_STATIC_INVALID_OPTION', /"root" option is required/],
    [{ root: 'relative/dir' }, 'FST_STATIC_INVALID_OPTION', /must be an absolute path/],
    [{ root: '/x/hello.txt' }, 'FST_STATIC_INVALID_OPTION', /must be a directory/],
    [{ root: 42 }, 'FST_STATIC_INVALID_OPTION_VALUE', /must be a string or array of strings/],
    [{ root: [] }, 'FST_STATIC_INVALID_OPTION', /one or more paths/],
    [{ root: ['/x', '/x'] }, 'FST_STATIC_INVALID_OPTION', /duplicate paths/],
    [{ root: '/x', setHeaders: 'no' }, 'FST_STATIC_INVALID_OPTION_VALUE', /"setHeaders" option must be a function/],
    [{ root: '/x', wildcard: 'no' }, 'FST_STATIC_INVALID_OPTION_VALUE', /"wildcard" option must be a boolean/],
    [{ root: '/x', list: { format: 'xml' } }, 'FST_STATIC_INVALID_OPTION_VALUE', /"list.format" option must be json or html/],
    [{ root: ['/x', '/x/second'], list: true }, 'FST_STATIC_MULTIROOT_LIST_CONFLICT', /multi-root/],
    [{ root: '/x', dotfiles: 'sometimes' }, undefined, /^options\.dotfiles must be 'allow', 'deny' or 'ignore', got 'sometimes'$/]
  ])('bad options %j: %s', async (given, code, message) => {
    const options = JSON.parse(JSON.stringify(given).replaceAll('/x', tree.root))
    if (typeof given.setHeaders === 'string') options.setHeaders = given.setHeaders
    const err = await ready((app) => app.register(zcopyFastify, options))
    expect(err).not.toBeNull()
    expect(err.message).toMatch(message)
    if (code !== undefined) expect(err.code).toBe(code)
  })

  it('a root whose stat fails otherwise (ENOTDIR, ENAMETOOLONG): ready() rejects with that error, as in @fastify/static', async () => {
    const throughFile = await ready((app) => app.register(zcopyFastify, { root: path.join(tree.root, 'hello.txt', 'x') }))
    expect(throughFile?.code).toBe('ENOTDIR')
    const tooLong = await ready((app) => app.register(zcopyFastify, { root: '/' + 'a'.repeat(5000) }))
    expect(tooLong?.code).toBe('ENAMETOOLONG')
  })

  it('a root that does not exist is a warning, as in @fastify/static', async () => {
    const warnings = []
    const app = Fastify()
    app.log.warn = (message) => warnings.push(message)
    app.register(zcopyFastify, { root: path.join(tree.root, 'not-yet') })
    await app.ready()
    await app.close()
    expect(warnings.join()).toMatch(/must exist/)
  })
})

describe('defaults and headers', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => {
      a.register(zcopyFastify, {
        root: tree.root,
        setHeaders (reply, file, stat) {
          reply.header('x-file', path.basename(file))
          reply.header('x-size', String(stat.size))
        }
      })
      a.get('/per-call', (request, reply) => reply.sendFile('hello.txt', { maxAge: 60000, immutable: true }))
      a.get('/typed', (request, reply) => reply.code(404).type('text/plain').sendFile('dir/index.html'))
    }))
  })
  afterAll(() => app.close())

  it('dotfiles: \'allow\' (/.well-known is served)', async () => {
    const res = await get('/.well-known/security.txt')
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('contact\n')
  })

  it('HTML as text/html; charset=utf-8; setHeaders gets the reply', async () => {
    const res = await get('/dir/index.html')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['x-file']).toBe('index.html')
    expect(res.headers['x-size']).toBe('13')
  })

  it('a setHeaders that throws: Fastify\'s error handler answers, with a body', async () => {
    const { app: other, get: getOther } = await start((a) => a.register(zcopyFastify, {
      root: tree.root,
      setHeaders () { throw new Error('no headers for you') }
    }))
    for (const url of ['/hello.txt', '/dir']) {
      const res = await getOther(url)
      expect(res.status).toBe(500)
      expect(JSON.parse(res.body).message).toBe('no headers for you')
    }
    await other.close()
  })

  it('per-call sendFile options', async () => {
    const res = await get('/per-call')
    expect(res.headers['cache-control']).toBe('public, max-age=60, immutable')
    expect((await get('/hello.txt')).headers['cache-control']).toBe('public, max-age=0')
  })

  it('reply.code() is kept, the file\'s Content-Type wins over an earlier one', async () => {
    const res = await get('/typed')
    expect(res.status).toBe(404)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body.toString()).toBe('<p>index</p>\n')
  })
})

describe('contentType: false', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => {
      a.register(zcopyFastify, { root: tree.root, contentType: false, preCompressed: true })
      a.get('/typed-by-app', (request, reply) => reply.type('application/x-mine').sendFile('hello.txt'))
    }))
  })
  afterAll(() => app.close())

  it('no Content-Type of the file\'s, plain or precompressed, as @fastify/static; one the app set stays', async () => {
    const plain = await get('/hello.txt')
    expect(plain.status).toBe(200)
    expect(plain.headers['content-type']).toBeUndefined()
    const packed = await get('/packed/page.html', { headers: { 'accept-encoding': 'gzip' } })
    expect(packed.headers['content-encoding']).toBe('gzip')
    expect(packed.headers['content-type']).toBeUndefined()
    expect((await get('/typed-by-app')).headers['content-type']).toBe('application/x-mine')
  })
})

describe('preCompressed', () => {
  let app, get
  beforeAll(async () => {
    ({ app, get } = await start((a) => a.register(zcopyFastify, { root: tree.root, preCompressed: true })))
  })
  afterAll(() => app.close())

  it.each([
    ['br, gzip', 'br', (body) => zlib.brotliDecompressSync(body)],
    ['gzip, deflate', 'gzip', (body) => zlib.gunzipSync(body)],
    ['deflate', 'deflate', (body) => zlib.inflateSync(body)],
    ['*', 'gzip', (body) => zlib.gunzipSync(body)],
    ['identity', undefined, (body) => body]
  ])('Accept-Encoding: %s → %s', async (accept, encoding, decode) => {
    const res = await get('/packed/page.html', { headers: { 'accept-encoding': accept } })
    expect(res.status).toBe(200)
    expect(res.headers['content-encoding']).toBe(encoding)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers.vary).toBe('accept-encoding')
    expect(decode(res.body).toString()).toBe(PAGE)
  })

  it('a precompressed sibling goes by sendfile as the file itself does (onSent says so)', async () => {
    const sent = []
    const { app: own, get: getOwn } = await start((a) => a.register(zcopyFastify, { root: tree.root, preCompressed: true, onSent: (res, s) => sent.push(s) }))
    try {
      const res = await getOwn('/packed/page.html', { headers: { 'accept-encoding': 'gzip' } })
      expect(zlib.gunzipSync(res.body).toString()).toBe(PAGE)
      await vi.waitFor(() => expect(sent).toEqual([{ bytes: res.body.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }]))
    } finally {
      await own.close()
    }
  })

  it('Vary: accept-encoding even for a file without siblings', async () => {
    const res = await get('/packed/plain.txt', { headers: { 'accept-encoding': 'br' } })
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.headers.vary).toBe('accept-encoding')
    expect(res.body.toString()).toBe('no siblings\n')
  })
})

describe('roots, routes and helpers', () => {
  it('an array of roots, tried in order', async () => {
    const { app, get } = await start((a) => a.register(zcopyFastify, { root: [tree.root, path.join(tree.root, 'second')] }))
    expect((await get('/hello.txt')).body.toString()).toBe('hello, adapters\n')
    expect((await get('/only-here.txt')).body.toString()).toBe('second root\n')
    expect((await get('/nowhere.txt')).status).toBe(404)
    await app.close()
  })

  it('wildcard: false: a route per file, globIgnore and dotfiles left out', async () => {
    const { app, get } = await start((a) => a.register(zcopyFastify, { root: tree.root, prefix: '/w', wildcard: false, globIgnore: ['**/*.bin'] }))
    expect((await get('/w/hello.txt')).status).toBe(200)
    expect((await get('/w/dir/')).body.toString()).toBe('<p>index</p>\n')
    expect((await get('/w/big.bin')).status).toBe(404)
    expect((await get('/w/.secret')).status).toBe(404)
    expect(app.hasRoute({ method: 'GET', url: '/w/hello.txt' })).toBe(true)
    expect(app.hasRoute({ method: 'GET', url: '/w/*' })).toBe(false)
    await app.close()
  })

  it('serve: false with reply.download(), allowedPath', async () => {
    const { app, get } = await start((a) => {
      a.register(zcopyFastify, { root: tree.root, serve: false, allowedPath: (pathname) => !pathname.startsWith('other/') })
      a.get('/dl', (request, reply) => reply.download('hello.txt', 'rapport é.txt'))
      a.get('/dl-other', (request, reply) => reply.download('other/page.html'))
    })
    expect((await get('/hello.txt')).status).toBe(404)
    const res = await get('/dl')
    expect(res.status).toBe(200)
    expect(res.headers['content-disposition']).toBe('attachment; filename="rapport ?.txt"; filename*=UTF-8\'\'rapport%20%C3%A9.txt')
    expect(res.body.toString()).toBe('hello, adapters\n')
    expect((await get('/dl-other')).status).toBe(404)
    await app.close()
  })

  it('allowedPath on URLs: asked once per request with the path as written, the root and the request; a refusal is not found; an index file is asked about too', async () => {
    const calls = []
    const { app, get } = await start((a) => a.register(zcopyFastify, {
      root: tree.root,
      allowedPath: (pathname, root, request) => {
        calls.push([pathname, root, request.query.key])
        return request.query.key === 'yes' || pathname === '/hello.txt'
      }
    }))
    const hello = await get('/hello.txt')
    expect([hello.status, hello.body.toString()]).toEqual([200, 'hello, adapters\n'])
    expect(calls).toEqual([['/hello.txt', tree.root, undefined]])
    calls.length = 0
    expect((await get('/packed/plain.txt')).status).toBe(404)
    expect(calls).toEqual([['/packed/plain.txt', tree.root, undefined]])
    calls.length = 0
    expect((await get('/packed/plain.txt?key=yes')).status).toBe(200)
    expect((await get('/missing.txt?key=yes')).status).toBe(404)
    expect(calls.map(([pathname]) => pathname)).toEqual(['/packed/plain.txt', '/missing.txt'])
    calls.length = 0
    fs.mkdirSync(path.join(tree.root, 'with-index'), { recursive: true })
    fs.writeFileSync(path.join(tree.root, 'with-index', 'index.html'), '<p>index</p>\n')
    expect((await get('/with-index/?key=yes')).status).toBe(200)
    expect(calls.map(([pathname]) => pathname)).toEqual(['/with-index/', '/with-index/index.html'])
    await app.close()
  })

  it('list: JSON and HTML listings', async () => {
    const { app, get } = await start((a) => a.register(zcopyFastify, {
      root: tree.root,
      prefix: '/files',
      index: false,
      list: { format: 'json', render: (dirs, files) => files.map((f) => `<a href="${f.href}">${f.name}</a>`).join('') }
    }))
    const json = JSON.parse((await get('/files/dir/')).body)
    expect(json).toEqual({ dirs: [], files: ['index.html'] })
    const html = await get('/files/other/?format=html')
    expect(html.headers['content-type']).toMatch(/^text\/html/)
    expect(html.body.toString()).toBe('<a href="/files/other/page.html">page.html</a>')
    await app.close()
  })

  it('list: a render that throws is a 500 with its message, as in @fastify/static', async () => {
    const { app, get } = await start((a) => a.register(zcopyFastify, {
      root: tree.root,
      prefix: '/public',
      index: false,
      list: { format: 'html', names: ['index'], render: () => { throw new Error('render failed') } }
    }))
    for (const url of ['/public/', '/public/index']) {
      const res = await get(url)
      expect(res.status).toBe(500)
      expect(JSON.parse(res.body.toString()).message).toBe('render failed')
    }
    await app.close()
  })

  it('prefixAvoidTrailingSlash, constraints, schemaHide, logLevel', async () => {
    const routes = []
    const { app, get } = await start((a) => {
      a.addHook('onRoute', (route) => routes.push(route))
      a.register(zcopyFastify, { root: tree.root, prefix: '/p', prefixAvoidTrailingSlash: true, constraints: { host: 'files.test' }, schemaHide: false, logLevel: 'warn' })
    })
    expect((await get('/p/hello.txt', { headers: { host: 'files.test' } })).status).toBe(200)
    expect((await get('/p/hello.txt', { headers: { host: 'other.test' } })).status).toBe(404)
    const route = routes.find((r) => r.url === '/p*')
    expect(route.schema.hide).toBe(false)
    expect(route.logLevel).toBe('warn')
    await app.close()
  })
})
