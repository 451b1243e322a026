// express.static's contract where it is easy to get wrong, against the real
// serve-static mounted side by side in one Express app (/theirs/... and /ours/...):
// a root that is a single file, encoded slashes, and directory redirects with their
// query strings. Status, Location, the headers a client acts on, body, and what
// reaches next() are compared.

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import express from 'express'
import serveStatic from 'serve-static'
import zcopy from '../../lib/index.js'
import { listen, request, rawExchange } from '../support/http.mjs'

const ACTED_ON = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified',
  'cache-control', 'location', 'x-next', 'x-set-headers']

const OPTION_SETS = {
  defaults: undefined,
  'fallthrough off': { fallthrough: false },
  'no index, no redirect': { index: false, redirect: false },
  extensions: { extensions: ['txt', 'html'] },
  'dotfiles deny': { dotfiles: 'deny' },
  'dotfiles allow': { dotfiles: 'allow' }
}

let base, server

function mount (app, prefix, make) {
  for (const [name, options] of Object.entries(OPTION_SETS)) {
    const key = name.replace(/\W+/g, '-')
    const opts = options && {
      ...options,
      setHeaders: (res) => res.setHeader('X-Set-Headers', 'yes')
    }
    app.use(`/${prefix}/${key}/robots.txt`, make(join(base, 'static/robots.txt'), opts))
    app.use(`/${prefix}/${key}/tree`, make(join(base, 'static'), opts))
    app.use(`/${prefix}/${key}/at-root-file`, express.Router().use(make(join(base, 'static/robots.txt'), opts)))
  }
  // What reaches next(): the fallthrough marker, or the error's shape.
  app.use(`/${prefix}`, (req, res) => res.status(418).set('X-Next', 'fallthrough').end('next()'))
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'zcopy-contract-'))
  await mkdir(join(base, 'static/dir/sub'), { recursive: true })
  await writeFile(join(base, 'static/robots.txt'), 'User-agent: *\nDisallow:\n')
  await writeFile(join(base, 'static/hello.txt'), 'hello\n')
  await writeFile(join(base, 'static/.env'), 'SECRET=1\n')
  await writeFile(join(base, 'static/dir/index.html'), '<h1>dir</h1>\n')
  await writeFile(join(base, 'static/dir/sub/index.html'), '<h1>sub</h1>\n')
  await writeFile(join(base, 'static/dir/a.txt'), 'a in dir\n')
  const app = express()
  mount(app, 'theirs', serveStatic)
  mount(app, 'ourown', zcopy.serveStatic)
  app.use((err, req, res, next) => {
    res.status(err.status || 500).set('X-Next', `${err.name}:${err.code || ''}:${err.expose}`).end(`error ${err.status}`)
  })
  server = await listen(app)
})

afterAll(async () => {
  await server?.close()
  await rm(base, { recursive: true, force: true })
})

function comparable ({ status, headers, body }, prefix) {
  const picked = {}
  for (const name of ACTED_ON) {
    if (headers[name] !== undefined) picked[name] = String(headers[name]).replaceAll(`/${prefix}/`, '/X/')
  }
  return { status, headers: picked, body: body.toString('latin1').replaceAll(`/${prefix}/`, '/X/') }
}

async function compare (path, options) {
  const theirs = await request(server.port, `/theirs${path}`, options)
  const ours = await request(server.port, `/ourown${path}`, options)
  expect(comparable(ours, 'ourown'), path).toEqual(comparable(theirs, 'theirs'))
  return ours
}

const FILE_ROOT_PATHS = [
  '/robots.txt', '/robots.txt?x=1', '/robots.txt/', '/robots.txt/?x=1', '/robots.txt/anything',
  '/robots.txt/index.html', '/robots.txt/.env', '/robots.txt/..', '/robots.txt/%2e%2e/hello.txt',
  '/robots.txt/%2f', '/robots.txt%2f', '/robots.txt//', '/robots.txt/a/b', '/robots.txt/%',
  '/at-root-file', '/at-root-file/', '/at-root-file/x', '/at-root-file?y=2'
]

const ENCODED_PATHS = [
  '/tree', '/tree?a=1&b=2', '/tree/dir', '/tree/dir?a=1&b=%20', '/tree/dir%2f', '/tree/dir%2F', '/tree/dir%2f?q=1',
  '/tree/dir%2f/', '/tree/dir%2fsub', '/tree/dir%2fsub%2f', '/tree/dir%2fsub%2f?z', '/tree/dir/sub', '/tree/dir/sub?x#y',
  '/tree/dir%2fa.txt', '/tree/dir%2fa', '/tree/dir/a.txt%2f', '/tree/hello.txt%2f', '/tree/hello%2f', '/tree/nope%2f',
  '/tree/dir%5c', '/tree/dir%2f..%2fhello.txt', '/tree/dir%2f%2e%2e%2fhello.txt', '/tree/%2e%2e%2fhello.txt',
  '/tree/%2fdir', '/tree/%2f%2fdir', '/tree//dir', '/tree//dir?x=1', '/tree/dir//', '/tree/dir?', '/tree/dir?%zz',
  '/tree/dir/sub%2f', '/tree/.env', '/tree/%2eenv', '/tree/dir%2f.env', '/tree/hello', '/tree/dir%2fsub%2findex.html'
]

describe.each(Object.keys(OPTION_SETS))('%s', (name) => {
  const key = name.replace(/\W+/g, '-')

  test('a root that is a single file answers every path below its mount as serve-static', async () => {
    for (const path of FILE_ROOT_PATHS) await compare(`/${key}${path}`)
    for (const method of ['HEAD', 'POST']) await compare(`/${key}/robots.txt`, { method })
    await compare(`/${key}/robots.txt`, { headers: { range: 'bytes=0-3' } })
  })

  test('encoded slashes and redirects with query strings answer as serve-static', async () => {
    for (const path of ENCODED_PATHS) await compare(`/${key}${path}`)
  })
})

test('the file root is served (not a 404), conditionally too', async () => {
  const first = await request(server.port, '/ourown/defaults/robots.txt')
  expect(first.status).toBe(200)
  expect(first.body.toString()).toBe('User-agent: *\nDisallow:\n')
  expect(first.headers['content-type']).toBe('text/plain; charset=utf-8')
  await compare('/defaults/robots.txt', { headers: { 'if-none-match': first.headers.etag } })
})

test('/dir%2f redirects to /dir%2f/ (the query kept), as express.static does', async () => {
  const res = await compare('/defaults/tree/dir%2f?q=1')
  expect(res.status).toBe(301)
  expect(res.headers.location).toBe('/ourown/defaults/tree/dir%2f/?q=1')
})

test('a raw request-target with a fragment redirects as express.static does', async () => {
  const exchange = async (prefix) => (await rawExchange(server.port,
    `GET /${prefix}/defaults/tree/dir?a=1#frag HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toString('latin1')
  const location = (text) => /\r\nLocation: ([^\r]*)/i.exec(text)?.[1]
  expect(location(await exchange('ourown'))?.replace('/ourown/', '/X/')).toBe(location(await exchange('theirs'))?.replace('/theirs/', '/X/'))
})
