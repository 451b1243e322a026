// Logging middleware reads a response back after it is sent: morgan's tokens
// call res.getHeader() and read res.statusCode once the response finishes. zcopy
// sets every header with res.setHeader and lets Node write the head, so what
// morgan logs must be what the client received, on every path: a body from
// memory, a body by sendfile, 304, 206, HEAD, a header the app set first, and a
// miss handed to the next handler.

import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import morgan from 'morgan'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'

const HEADERS = ['content-length', 'content-type', 'etag', 'last-modified', 'cache-control', 'accept-ranges', 'content-range']
const FORMAT = [':method', ':url', ':status', ...HEADERS.map((name) => `:res[${name}]`)].join('\t')

const small = randomBytes(4096)
const big = randomBytes(1024 * 1024 + 7)
let root, app
const lines = []

beforeAll(async () => {
  root = fs.realpathSync(await mkdtemp(join(tmpdir(), 'zcopy-logging-')))
  fs.writeFileSync(join(root, 'small.js'), small)
  fs.writeFileSync(join(root, 'big.bin'), big)
  const log = new Writable({
    write (chunk, encoding, callback) {
      lines.push(String(chunk).trimEnd())
      callback()
    }
  })
  const server = express()
  server.use(morgan(FORMAT, { stream: log }))
  server.use('/no-store', (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store')
    next()
  })
  server.use('/no-store', zcopy.serveStatic(root))
  server.use(zcopy.serveStatic(root, { maxAge: '1h' }))
  app = await listen(server)
})

afterAll(async () => {
  await app.close()
  await rm(root, { recursive: true, force: true })
})

// The request, then the line morgan wrote for it (written when the response
// finished: waited for).
async function logged (path, options = {}) {
  const before = lines.length
  const res = await request(app.port, path, options)
  for (let i = 0; lines.length === before && i < 200; i++) await sleep(5)
  expect(lines.length).toBe(before + 1)
  return { res, line: lines[before].replaceAll('\\"', '"').split('\t') } // morgan escapes quotes
}

// What morgan logged against what the client got.
function expectLoggedAsReceived ({ res, line }, method, path) {
  const [loggedMethod, url, status, ...headers] = line
  expect([loggedMethod, url, Number(status)]).toEqual([method, path, res.status])
  expect(Object.fromEntries(HEADERS.map((name, i) => [name, headers[i]]))).toEqual(
    Object.fromEntries(HEADERS.map((name) => [name, res.headers[name] ?? '-'])))
}

test('a small file, from the descriptor and then from memory', async () => {
  for (let i = 0; i < 3; i++) {
    const exchange = await logged('/small.js')
    expect(exchange.res.body.equals(small)).toBe(true)
    expectLoggedAsReceived(exchange, 'GET', '/small.js')
    expect(exchange.line[3]).toBe('4096')
    expect(exchange.line[4]).toMatch(/^(text|application)\/javascript; charset=utf-8$/)
    expect(exchange.line[7]).toBe('public, max-age=3600')
    await sleep(10) // lets the read into memory finish
  }
})

test('a big file by sendfile', async () => {
  const exchange = await logged('/big.bin')
  expect(exchange.res.body.equals(big)).toBe(true)
  expectLoggedAsReceived(exchange, 'GET', '/big.bin')
  expect(exchange.line[3]).toBe(String(big.length))
})

test('304, 206 and HEAD', async () => {
  const { res } = await logged('/big.bin', { method: 'HEAD' })
  const notModified = await logged('/big.bin', { headers: { 'if-none-match': res.headers.etag } })
  expect(notModified.res.status).toBe(304)
  expectLoggedAsReceived(notModified, 'GET', '/big.bin')

  const range = await logged('/big.bin', { headers: { range: 'bytes=10-19' } })
  expect(range.res.status).toBe(206)
  expect(range.res.body.equals(big.subarray(10, 20))).toBe(true)
  expectLoggedAsReceived(range, 'GET', '/big.bin')
  expect(range.line[9]).toBe(`bytes 10-19/${big.length}`)

  const head = await logged('/small.js', { method: 'HEAD' })
  expectLoggedAsReceived(head, 'HEAD', '/small.js')
})

test('a header the app set first wins, and is what is logged', async () => {
  const exchange = await logged('/no-store/big.bin')
  expect(exchange.res.headers['cache-control']).toBe('no-store')
  expectLoggedAsReceived(exchange, 'GET', '/no-store/big.bin')
})

test('a miss falls through to Express, logged as its 404', async () => {
  const exchange = await logged('/missing.js')
  expect(exchange.res.status).toBe(404)
  expectLoggedAsReceived(exchange, 'GET', '/missing.js')
})
