// Request-targets an attacker sends raw, on every entry point: an absolute-form
// target is served by its path alone (RFC 9112 §3.2.2), so 'http://x/../../f'
// climbs and is refused rather than normalised to 'f'; and no directory redirect
// sends a browser to another host ('/\evil.example/..' is '//evil.example/' to
// a WHATWG URL parser) or to a path that reads as one.

import fs from 'node:fs'
import path from 'node:path'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import zcopyFastify from '../../lib/adapters/fastify.js'
import zcopyKoa from '../../lib/adapters/koa.js'
import { startServe } from '../cli/serve-helpers.mjs'
import { listen, rawExchange } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const MANIFEST = '{"name":"the-served-root"}\n'
const PAGE = 'a page below lib\n'

let site
beforeAll(() => {
  site = makeTempDir('zcopy-hostile-')
  fs.writeFileSync(path.join(site, 'package.json'), MANIFEST)
  fs.mkdirSync(path.join(site, 'lib'))
  fs.writeFileSync(path.join(site, 'lib', 'page.txt'), PAGE)
})
afterAll(() => removeTempDir(site))

// One raw request (the target exactly as written) on its own connection.
async function get (port, target, host = `127.0.0.1:${port}`) {
  const bytes = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
  const text = bytes.toString('latin1')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])
  const location = /\r\nlocation: ([^\r]*)/i.exec(text)?.[1] ?? null
  return { status, location, text }
}

// Where a browser that got `location` from this server goes.
function followed (port, location) {
  return new URL(location, `http://127.0.0.1:${port}/`)
}

// Targets that climb out of the root once their path is read as a path, or that
// have no path at all: never a file, never a redirect.
const REFUSED = [
  'http://x/../../package.json',
  'http://x/..%2f..%2fpackage.json',
  'HTTP://x/a/../../../package.json',
  'https://evil.example/../../lib',
  'https://evil.example/../../lib?a=b',
  'http://user:pw@x:80/../lib/page.txt',
  '*',
  'package.json',
  'lib/'
]

// Directory requests whose redirect a browser would resolve to another host or
// to a path starting with '//' (backslashes are slashes to WHATWG parsers).
const NO_OFFSITE_REDIRECT = [
  '/\\evil.example/../lib',
  '/\\\\evil.example/../lib',
  '/\\/evil.example/../lib',
  '//\\evil.example/../lib',
  '/.//evil.example/../lib',
  '/./\\evil.example/../lib',
  '//evil.example/../lib',
  '///evil.example/../lib',
  '/%5Cevil.example/../lib',
  '/%2F%2Fevil.example/../lib',
  'http://x//evil.example/../lib',
  'http://x/\\evil.example/../lib'
]

function entryPoints () {
  const points = {
    async 'node:http + serveStatic' () {
      const serve = zcopy.serveStatic(site)
      const server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
      return { port: server.port, prefix: '', close: async () => { await server.close(); serve.close() } }
    },
    async 'Express, serveStatic at /' () {
      const serve = zcopy.serveStatic(site)
      const server = await listen(express().use(serve))
      return { port: server.port, prefix: '', close: async () => { await server.close(); serve.close() } }
    },
    async 'Express, serveStatic at /static' () {
      const serve = zcopy.serveStatic(site)
      const server = await listen(express().use('/static', serve))
      return { port: server.port, prefix: '/static', close: async () => { await server.close(); serve.close() } }
    },
    async 'Koa' () {
      const middleware = zcopyKoa(site)
      const server = await listen(new Koa().use(middleware).callback())
      return { port: server.port, prefix: '', close: async () => { await server.close(); await middleware.close?.() } }
    },
    // Fastify routes on the raw target, so an app's own route guard ('/deep/*')
    // never sees an absolute-form one: the adapter refuses it rather than serve
    // by its path what such a guard protects.
    async 'Fastify' () {
      const app = Fastify()
      app.register(zcopyFastify, { root: site, redirect: true })
      await app.listen({ port: 0, host: '127.0.0.1' })
      return { port: app.server.address().port, prefix: '', absoluteForm: 'refused', close: () => app.close() }
    },
    async 'zcopy serve' () {
      const serve = await startServe(site, ['--quiet'])
      return { port: Number(new URL(serve.url).port), prefix: '', close: () => serve.stop() }
    }
  }
  return Object.entries(points)
}

// The prefix goes into the path of a target, after any scheme and authority.
function under (prefix, target) {
  if (prefix === '' || !target.includes('/')) return target
  const authority = /^[a-z]+:\/\/[^/]*/i.exec(target)?.[0] ?? ''
  return authority + prefix + target.slice(authority.length)
}

describe.each(entryPoints())('%s', (name, start) => {
  let point
  beforeAll(async () => { point = await start() }, 30_000)
  afterAll(() => point.close())

  test.each(REFUSED)('%s: no file, no redirect', async (target) => {
    const { status, location, text } = await get(point.port, under(point.prefix, target))
    expect(status, text).toBeGreaterThanOrEqual(400)
    expect(status).toBeLessThan(500)
    expect(location).toBe(null)
    expect(text).not.toContain(MANIFEST.trim())
    expect(text).not.toContain(PAGE.trim())
  })

  test.each(NO_OFFSITE_REDIRECT)('%s: never redirected off this host', async (target) => {
    const sent = under(point.prefix, target)
    const { status, location, text } = await get(point.port, sent)
    expect(status, text).not.toBe(200)
    if (location !== null) {
      const there = followed(point.port, location)
      expect(there.host, location).toBe(`127.0.0.1:${point.port}`)
      expect(there.pathname.startsWith('//'), location).toBe(false)
    }
  })

  test('an absolute-form target is served by its path (or refused where routes see the raw target)', async () => {
    const file = await get(point.port, `http://other.example${point.prefix}/lib/page.txt`)
    if (point.absoluteForm === 'refused') {
      expect(file.status).toBe(403)
      expect(file.text).not.toContain(PAGE.trim())
      return
    }
    expect(file.status).toBe(200)
    expect(file.text.endsWith(PAGE)).toBe(true)
  })
})

test('a plain directory redirect is unchanged: /lib → /lib/, the query kept', async () => {
  const serve = zcopy.serveStatic(site)
  const server = await listen((req, res) => serve(req, res, () => res.end()))
  try {
    const plain = await get(server.port, '/lib?a=b')
    expect(plain.status).toBe(301)
    expect(plain.location).toBe('/lib/?a=b')
    const absolute = await get(server.port, 'http://x/lib?a=b')
    expect(absolute.status).toBe(301)
    expect(absolute.location).toBe('/lib/?a=b')
  } finally {
    await server.close()
    serve.close()
  }
})

test('the server survives every hostile target on one keep-alive connection', async () => {
  const serve = zcopy.serveStatic(site)
  const server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    // Node's parser itself answers 400 and closes for a target such as 'package.json'.
    const targets = [...REFUSED, ...NO_OFFSITE_REDIRECT].filter((target) => /^(\/|\*$|[a-z]+:\/\/)/i.test(target))
    const raw = targets.map((target) => `GET ${target} HTTP/1.1\r\nHost: h\r\n\r\n`).join('') +
      'GET /lib/page.txt HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'
    const text = (await rawExchange(server.port, raw)).toString('latin1')
    expect(text.match(/^HTTP\/1\.1 /gm).length).toBe(targets.length + 1)
    expect(text.endsWith(PAGE)).toBe(true)
  } finally {
    await server.close()
    serve.close()
  }
})
