// zcopy/fastify in a real Fastify app, through fastify.inject() (light-my-request:
// no real socket, so bodies go through the response object) and through a real
// listening server (zero-copy when the addon is there).
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import zcopy from 'zcopy'
import zcopyFastify from 'zcopy/fastify'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

let tree
beforeAll(() => { tree = makeTree() })
afterAll(() => removeTempDir(tree.root))

// An app with the plugin at `prefix`, a not-found handler of its own, an error
// handler that records, reply.sendFile routes, and onSent results in `sent`.
async function build (options = {}) {
  const app = Fastify()
  const sent = []
  const errors = []
  app.addHook('onRequest', async (request, reply) => { reply.header('x-hook', 'onRequest') })
  app.register(zcopyFastify, { root: tree.root, onSent: (res, result) => sent.push(result), ...options })
  app.setNotFoundHandler((request, reply) => reply.code(404).type('text/plain').send(`custom 404 ${request.url}`))
  app.setErrorHandler((err, request, reply) => {
    errors.push(err.statusCode)
    reply.code(err.statusCode || 500).send({ error: err.message })
  })
  app.get('/send/:name', (request, reply) => reply.sendFile(request.params.name))
  app.get('/send-async/:name', async (request, reply) => reply.sendFile(request.params.name))
  app.get('/send-other', (request, reply) => reply.sendFile('page.html', tree.root + '/other'))
  app.get('/send-other-object', (request, reply) => reply.sendFile('page.html', { root: tree.root + '/other' }))
  app.get('/send-dir', (request, reply) => reply.sendFile('dir'))
  app.get('/not-here', (request, reply) => reply.code(404).sendFile('hello.txt'))
  app.post('/send-post', (request, reply) => reply.sendFile('hello.txt'))
  app.get('/api/json', async () => ({ ok: true }))
  await app.ready()
  return { app, sent, errors }
}

// The same requests through inject() and through a listening server.
const transports = {
  inject: async (app) => async (path, { method = 'GET', headers = {} } = {}) => {
    const res = await app.inject({ method, url: path, headers })
    return { status: res.statusCode, headers: res.headers, body: res.rawPayload }
  },
  listen: async (app) => {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address()
    return (path, options) => request(port, path, options)
  }
}

for (const [transport, connect] of Object.entries(transports)) {
  describe(`through ${transport}`, () => {
    let app, sent, errors, get
    beforeAll(async () => {
      ({ app, sent, errors } = await build())
      get = await connect(app)
    })
    afterAll(() => app.close())

    it('GET: 200, the file\'s bytes and headers, onRequest headers carried', async () => {
      sent.length = 0
      const res = await get('/big.bin')
      expect(res.status).toBe(200)
      expect(res.body.equals(tree.big)).toBe(true)
      expect(res.headers['content-length']).toBe(String(tree.big.length))
      expect(res.headers['accept-ranges']).toBe('bytes')
      expect(res.headers['x-hook']).toBe('onRequest')
      // inject() gives no socket: the body went through the response object.
      // onSent runs once the engine reports the transfer done, which may come
      // after the client has read the last byte.
      await vi.waitFor(() => expect(sent).toEqual([{ bytes: tree.big.length, zeroCopy: transport === 'listen' && zcopy.zeroCopyAvailable, complete: true }]))
    })

    it('HEAD: 200, headers, no body', async () => {
      const res = await get('/hello.txt', { method: 'HEAD' })
      expect(res.status).toBe(200)
      expect(res.headers['content-length']).toBe('16')
      expect(res.headers['content-type']).toMatch(/^text\/plain/)
      expect(res.body.length).toBe(0)
    })

    it('Range: 206; unsatisfiable: 416 with Content-Range', async () => {
      const partial = await get('/big.bin', { headers: { range: 'bytes=-100' } })
      expect(partial.status).toBe(206)
      expect(partial.headers['content-range']).toBe(`bytes ${tree.big.length - 100}-${tree.big.length - 1}/${tree.big.length}`)
      expect(partial.body.equals(tree.big.subarray(-100))).toBe(true)
      const refused = await get('/hello.txt', { headers: { range: 'bytes=500-' } })
      expect(refused.status).toBe(416)
      expect(refused.headers['content-range']).toBe('bytes */16')
    })

    it('conditional: 304 for the ETag, 412 for a failed If-Match', async () => {
      const first = await get('/hello.txt')
      const again = await get('/hello.txt', { headers: { 'if-none-match': first.headers.etag } })
      expect(again.status).toBe(304)
      expect(again.body.length).toBe(0)
      expect((await get('/hello.txt', { headers: { 'if-match': '"other"' } })).status).toBe(412)
    })

    it('a miss goes to the not-found handler (setNotFoundHandler)', async () => {
      const res = await get('/missing.txt?q=1')
      expect(res.status).toBe(404)
      expect(res.body.toString()).toBe('custom 404 /missing.txt?q=1')
      const dotfile = await get('/.secret') // dotfiles: 'allow', @fastify/static's default
      expect(dotfile.status).toBe(200)
    })

    it('other routes still win over the wildcard', async () => {
      const res = await get('/api/json')
      expect(JSON.parse(res.body)).toEqual({ ok: true })
    })

    it('a directory with or without its trailing slash: its index (redirect: false)', async () => {
      for (const url of ['/dir?x=1', '/dir/']) {
        const index = await get(url)
        expect(index.status).toBe(200)
        expect(index.body.toString()).toBe('<p>index</p>\n')
      }
    })

    it('reply.sendFile(path), from sync and async handlers', async () => {
      for (const route of ['/send/hello.txt', '/send-async/hello.txt']) {
        const res = await get(route)
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe('hello, adapters\n')
        expect(res.headers['x-hook']).toBe('onRequest')
      }
      const ranged = await get('/send/big.bin', { headers: { range: 'bytes=0-9' } })
      expect(ranged.status).toBe(206)
      expect(ranged.body.equals(tree.big.subarray(0, 10))).toBe(true)
    })

    it('reply.sendFile from a POST route answers with the file, as sendFile does', async () => {
      const res = await get('/send-post', { method: 'POST' })
      expect(res.status).toBe(200)
      expect(res.body.toString()).toBe('hello, adapters\n')
      expect((await get('/hello.txt', { method: 'POST' })).status).toBe(404) // no POST route for files
    })

    it('reply.sendFile(path, root) and (path, { root })', async () => {
      for (const route of ['/send-other', '/send-other-object']) {
        const res = await get(route)
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe('<p>other</p>\n')
      }
    })

    it('reply.sendFile of a miss: the not-found handler; of a directory: its index', async () => {
      expect((await get('/send/nope.txt')).body.toString()).toBe('custom 404 /send/nope.txt')
      expect((await get('/send-dir')).body.toString()).toBe('<p>index</p>\n')
    })

    it('a status set with reply.code() is kept, as @fastify/static and send keep it', async () => {
      const res = await get('/not-here')
      expect(res.status).toBe(404)
      expect(res.body.toString()).toBe('hello, adapters\n')
    })

    it('errors other than not found (a 400) go to the error handler', async () => {
      errors.length = 0
      const res = await get('/x%00.txt') // a NUL byte
      expect(res.status).toBe(400)
      expect(errors).toEqual([400])
    })
  })
}

describe('options', () => {
  it('prefix: files under it, the rest is not found', async () => {
    const { app } = await build({ prefix: '/public', redirect: true })
    const get = await transports.listen(app)
    const res = await get('/public/hello.txt')
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('hello, adapters\n')
    expect((await get('/public/other/page.html')).body.toString()).toBe('<p>other</p>\n')
    const redirect = await get('/public/dir')
    expect(redirect.status).toBe(301)
    expect(redirect.headers.location).toBe('/public/dir/')
    const bare = await get('/public?a=b') // the prefix itself, with redirect: true
    expect(bare.status).toBe(301)
    expect(bare.headers.location).toBe('/public/?a=b')
    expect((await get('/public/dir/')).body.toString()).toBe('<p>index</p>\n')
    expect((await get('/hello.txt')).body.toString()).toBe('custom 404 /hello.txt')
    expect((await get('/public/nope')).body.toString()).toBe('custom 404 /public/nope')
    await app.close()
  })

  it('two registrations, under a parent prefix, one without decorateReply', async () => {
    const app = Fastify()
    app.register(zcopyFastify, { root: tree.root + '/other', prefix: '/a/' })
    app.register(async (child) => {
      child.register(zcopyFastify, { root: tree.root + '/dir', prefix: '/b/', decorateReply: false })
    }, { prefix: '/nested' })
    const inject = await transports.inject(app)
    expect((await inject('/a/page.html')).body.toString()).toBe('<p>other</p>\n')
    expect((await inject('/nested/b/index.html')).body.toString()).toBe('<p>index</p>\n')
    expect((await inject('/nested/b/')).body.toString()).toBe('<p>index</p>\n')
    expect((await inject('/b/index.html')).status).toBe(404)
    await app.close()
  })

  it('dotfiles: deny → 403 through Fastify\'s error handler', async () => {
    const { app, errors } = await build({ dotfiles: 'deny' })
    const inject = await transports.inject(app)
    const res = await inject('/.secret')
    expect(res.status).toBe(403)
    expect(errors).toEqual([403])
    await app.close()
  })

  it('Fastify\'s default not-found and error handlers', async () => {
    const app = Fastify()
    app.register(zcopyFastify, { root: tree.root, dotfiles: 'deny' })
    const inject = await transports.inject(app)
    const missing = await inject('/missing')
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.body).message).toMatch(/Route GET:\/missing not found/)
    const denied = await inject('/.secret')
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body)).toMatchObject({ statusCode: 403 })
    await app.close()
  })

  it('root is required', async () => {
    const app = Fastify()
    app.register(zcopyFastify, { prefix: '/x/' })
    await expect(app.ready()).rejects.toThrow(/root/)
  })
})
