// The same requests against express.static and zcopy.serveStatic, each in its own
// Express 5 app with the same options: same statuses, same headers (Date aside),
// same bodies.

import { statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import express from 'express'
import etag from 'etag'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { makeTree } from '../fixtures/http/tree.mjs'

const OPTION_SETS = {
  defaults: {},
  'fallthrough off': { fallthrough: false },
  'no index, no redirect': { index: false, redirect: false },
  'extensions, dotfiles allowed, maxAge string, immutable': {
    extensions: ['html', 'txt'], dotfiles: 'allow', maxAge: '1d', immutable: true
  },
  'dotfiles denied, validators and ranges off': {
    dotfiles: 'deny', etag: false, lastModified: false, acceptRanges: false, cacheControl: false
  },
  'custom index, numeric maxAge, setHeaders': {
    index: ['page.html', 'index.html'],
    maxAge: 90_000,
    setHeaders (res, path, stat) {
      res.setHeader('X-File-Size', String(stat.size))
      if (path.endsWith('.txt')) res.setHeader('Cache-Control', 'no-cache')
    }
  }
}

const PATHS = [
  '/static/hello.txt',
  '/static/with%20space.txt',
  '/static/' + encodeURIComponent('ünïcødé ✓.txt'),
  '/static/archive.tar.gz',
  '/static/percent%2541.txt',
  '/static/data.json',
  '/static/noext',
  '/static/empty.txt',
  '/static/index.html',
  '/static/',
  '/static',
  '/static?x=1',
  '/static/dir',
  '/static/dir?a=1&b=2',
  '/static/dir/',
  '/static/dir/sub',
  '/static/dir/sub/',
  '/static/empty-dir',
  '/static/empty-dir/',
  '/static/nope',
  '/static/nope/',
  '/static/hello.txt/',
  '/static/page',
  '/static/hello',
  '/static/.hidden',
  '/static/.hiddendir/file.txt',
  '/static/dir/../hello.txt',
  '/static/link-inside.txt',
  '/static/%',
  '/static/%E0%A4%A',
  '/static/hello%00.txt',
  '/static/../secret/secret.txt',
  '/static/..%2fsecret%2fsecret.txt',
  '/static//hello.txt',
  '/static//dir',
  '/hello.txt'
]

let tree, validators

function headerVariants () {
  return {
    plain: {},
    'range first bytes': { range: 'bytes=0-4' },
    'range suffix': { range: 'bytes=-5' },
    'range open end': { range: 'bytes=3-' },
    'range several': { range: 'bytes=0-1,4-5' },
    'range unsatisfiable': { range: 'bytes=99999999-' },
    'range malformed': { range: 'bytes=x-y' },
    'range other unit': { range: 'items=0-1' },
    'if-none-match current': { 'if-none-match': validators.etag },
    'if-none-match other': { 'if-none-match': 'W/"other"' },
    'if-modified-since later': { 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() },
    'if-modified-since earlier': { 'if-modified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
    'if-match current': { 'if-match': validators.etag },
    'if-match other': { 'if-match': '"nope"' },
    'if-match star': { 'if-match': '*' },
    'if-unmodified-since earlier': { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
    'if-range current etag': { range: 'bytes=0-2', 'if-range': validators.etag },
    'if-range stale etag': { range: 'bytes=0-2', 'if-range': 'W/"stale"' },
    'if-range date': { range: 'bytes=0-2', 'if-range': validators.lastModified },
    'no-cache': { 'if-none-match': validators.etag, 'cache-control': 'no-cache' }
  }
}

// Errors end in the same small handler in both apps (Express' default one logs
// them, and its pages show stacks naming different files).
function answerError (err, req, res, next) {
  res.statusCode = err.status || 500
  for (const [name, value] of Object.entries(err.headers || {})) res.setHeader(name, value)
  res.end(`error ${res.statusCode}`)
}

function expressApp (...middleware) {
  return express().use(...middleware).use(answerError)
}

function makeApp (middleware) {
  const app = express()
  app.use('/static', middleware)
  app.use((req, res, next) => {
    // a later route: fallthrough must reach it
    if (req.path === '/static/nope') return res.status(418).send('fell through')
    next()
  })
  return app.use(answerError)
}

async function both (options, run) {
  const theirs = await listen(makeApp(express.static(tree.root, options)))
  const ours = await listen(makeApp(zcopy.serveStatic(tree.root, options)))
  try {
    await run(theirs, ours)
  } finally {
    await Promise.all([theirs.close(), ours.close()])
  }
}

function comparable ({ status, headers, body }) {
  const { date, ...rest } = headers
  return { status, headers: rest, body: body.toString('latin1') }
}

beforeAll(async () => {
  tree = await makeTree()
  // Modified a minute ago: a Last-Modified that If-Range's date may validate
  // (zcopy asks that it be a second old, a strong validator; send does not).
  const minuteAgo = new Date(Date.now() - 60_000)
  utimesSync(join(tree.root, 'hello.txt'), minuteAgo, minuteAgo)
  const stat = statSync(join(tree.root, 'hello.txt'))
  validators = { etag: etag(stat), lastModified: stat.mtime.toUTCString() }
})

afterAll(() => tree.cleanup())

describe.each(Object.entries(OPTION_SETS))('same answers as express.static: %s', (name, options) => {
  test.each(['GET', 'HEAD', 'POST', 'OPTIONS'])('%s on every fixture path', async (method) => {
    await both(options, async (theirs, ours) => {
      for (const path of PATHS) {
        const expected = comparable(await request(theirs.port, path, { method }))
        const actual = comparable(await request(ours.port, path, { method }))
        expect({ path, ...actual }).toEqual({ path, ...expected })
      }
    })
  })

  test('conditional and range headers', async () => {
    await both(options, async (theirs, ours) => {
      for (const path of ['/static/hello.txt', '/static/empty.txt', '/static/dir/']) {
        for (const [variant, headers] of Object.entries(headerVariants())) {
          for (const method of ['GET', 'HEAD']) {
            const expected = comparable(await request(theirs.port, path, { method, headers }))
            const actual = comparable(await request(ours.port, path, { method, headers }))
            expect({ path, variant, method, ...actual }).toEqual({ path, variant, method, ...expected })
          }
        }
      }
    })
  })
})

test('headers the application set first are kept, as express.static keeps them', async () => {
  const preset = (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store')
    res.setHeader('Content-Type', 'text/x-custom')
    res.setHeader('ETag', '"app-etag"')
    next()
  }
  const theirs = await listen(expressApp(preset, express.static(tree.root)))
  const ours = await listen(expressApp(preset, zcopy.serveStatic(tree.root)))
  try {
    for (const headers of [{}, { 'if-none-match': '"app-etag"' }, { 'if-match': '"app-etag"' }]) {
      const expected = comparable(await request(theirs.port, '/hello.txt', { headers }))
      const actual = comparable(await request(ours.port, '/hello.txt', { headers }))
      expect(actual).toEqual(expected)
    }
    expect((await request(ours.port, '/hello.txt')).headers['cache-control']).toBe('no-store')
  } finally {
    await Promise.all([theirs.close(), ours.close()])
  }
})

test('the big file: same bytes for whole and partial answers', async () => {
  await both({}, async (theirs, ours) => {
    for (const range of [undefined, 'bytes=0-0', 'bytes=1000-2000000', 'bytes=-1', 'bytes=3145728-']) {
      const headers = range ? { range } : {}
      const expected = comparable(await request(theirs.port, '/static/big.bin', { headers }))
      const actual = comparable(await request(ours.port, '/static/big.bin', { headers }))
      expect(actual.status).toBe(expected.status)
      expect(actual.headers).toEqual(expected.headers)
      expect(actual.body === expected.body).toBe(true)
    }
  })
})
