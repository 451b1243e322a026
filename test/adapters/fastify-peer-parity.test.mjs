// zcopy/fastify and @fastify/static (the devDependency, 10.x) side by side on the
// same tree and the same raw requests: the same status, Content-Encoding and
// body. Issue 50, items 13-14: paths that normalise to another ('//foobar.html',
// '/./foobar.html', '//^/.') are refused by both with 403
// FST_STATIC_FORBIDDEN_PATH (@fastify/static 10.1.11's own suite expects 403 for
// them too; the route-guard protection of fastify-guards.test.mjs stays), and
// with preCompressed a dotfile's '.br' sibling is served by both when dotfiles
// are allowed, not found or denied by both otherwise.
import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'
import fastifyStatic from '@fastify/static'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopyFastify from 'zcopy/fastify'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
import { request } from './helpers.mjs'

let root
beforeAll(() => {
  root = makeTempDir('zcopy-parity-')
  const write = (name, data) => {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), data)
  }
  write('foobar.html', '<p>foobar</p>\n')
  write('index.html', '<p>index</p>\n')
  write('deep/path/foo.html', '<p>deep</p>\n')
  write('.env', 'identity dotfile\n')
  write('.env.br', 'br bytes of the dotfile')
  write('.env.gz', 'gzip bytes of the dotfile')
  write('.well-known/a.txt', 'identity a\n')
  write('.well-known/a.txt.br', 'br bytes of a')
  write('app.js', 'identity app\n')
  write('app.js.br', 'br bytes of app')
})
afterAll(() => removeTempDir(root))

async function both (options, fn) {
  const apps = []
  try {
    const ports = []
    for (const plugin of [fastifyStatic, zcopyFastify]) {
      const app = Fastify()
      apps.push(app)
      app.register(plugin, { root, ...options })
      await app.listen({ port: 0, host: '127.0.0.1' })
      ports.push(app.server.address().port)
    }
    await fn(...ports)
  } finally {
    await Promise.all(apps.map((app) => app.close()))
  }
}

// What is compared of an answer.
const answer = ({ status, headers, body }) => ({
  status,
  encoding: headers['content-encoding'] ?? null,
  location: headers.location ?? null,
  // Error bodies are Fastify's JSON, equal but for wording we do not copy: the code.
  body: status < 300 ? body.toString() : (headers['content-type'] || '').startsWith('application/json') ? JSON.parse(body).code ?? null : null
})

async function expectSame (peerPort, ownPort, url, headers = {}) {
  const peer = answer(await request(peerPort, url, { headers }))
  const own = answer(await request(ownPort, url, { headers }))
  expect({ url, ...own }).toEqual({ url, ...peer })
  return own
}

describe('non-canonical paths: the peer\'s status (item 13)', () => {
  it.each([
    [{ allowedPath: (pathname) => pathname !== '/foobar.html' }],
    [{ redirect: true }],
    [{}]
  ])('%o', async (options) => {
    await both(options, async (peer, own) => {
      for (const url of ['//foobar.html', '/./foobar.html', '//^/.', '//^/..', '/deep//path/foo.html', '/deep/path/./foo.html', '/x/../foobar.html']) {
        const { status, body } = await expectSame(peer, own, url)
        expect(status).toBe(403)
        expect(body).toBe('FST_STATIC_FORBIDDEN_PATH')
      }
      expect((await expectSame(peer, own, '/deep/path/foo.html')).status).toBe(200)
    })
  })
})

describe('preCompressed and dotfiles: the peer\'s answer (item 14)', () => {
  it.each([
    [{}], [{ dotfiles: 'allow' }], [{ dotfiles: 'ignore' }], [{ dotfiles: 'deny' }],
    [{ dotfiles: 'allow', wildcard: false }], [{ wildcard: false, serveDotFiles: true }]
  ])('%o', async (options) => {
    await both({ preCompressed: true, ...options }, async (peer, own) => {
      for (const url of ['/.env', '/.well-known/a.txt', '/app.js', '/.env.br']) {
        for (const acceptEncoding of ['br, gzip', 'gzip', 'identity']) {
          await expectSame(peer, own, url, { 'accept-encoding': acceptEncoding })
        }
      }
    })
  })

  it('dotfiles allowed: a dotfile\'s .br sibling is what goes out', async () => {
    await both({ preCompressed: true, dotfiles: 'allow' }, async (peer, own) => {
      const { status, encoding, body } = await expectSame(peer, own, '/.env', { 'accept-encoding': 'br' })
      expect({ status, encoding, body }).toEqual({ status: 200, encoding: 'br', body: 'br bytes of the dotfile' })
    })
  })
})
