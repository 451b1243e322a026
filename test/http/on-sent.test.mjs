// options.onSent reports how each body went out, and never claims zero-copy that
// did not happen.
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import path from 'node:path'
import compression from 'compression'
import express from 'express'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { FILES, makeTree } from '../fixtures/http/tree.mjs'
import { listen, request, secureGet, tls } from '../support/http.mjs'

const HUGE = 64 * 1024 * 1024
let tree
beforeAll(async () => {
  tree = await makeTree()
  fs.writeFileSync(path.join(tree.root, 'huge.bin'), Buffer.alloc(HUGE, 7))
})
afterAll(() => tree.cleanup())

// GET /big.bin from an app built around serveStatic; → { body, sent }.
async function fetchRecording (build, get) {
  const sent = []
  const serve = zcopy.serveStatic(tree.root, { onSent: (res, result) => sent.push(result) })
  const server = await listen(...build(serve))
  try {
    const body = await get(server.port)
    // The client can read the last byte before the engine reports the transfer
    // done (a loaded machine): the report is waited for, never assumed.
    for (const deadline = Date.now() + 10_000; sent.length === 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return { body, sent }
  } finally {
    await server.close()
  }
}

const big = FILES['big.bin']

it('reports zero-copy over plain HTTP when the addon is loaded', async () => {
  const { body, sent } = await fetchRecording(
    (serve) => [express().use(serve)],
    async (port) => (await request(port, '/big.bin')).body
  )
  expect(body.equals(big)).toBe(true)
  expect(sent).toEqual([{ bytes: big.length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }])
})

it('reports streams over TLS', async () => {
  const { body, sent } = await fetchRecording(
    (serve) => [null, https.createServer(tls, express().use(serve))],
    (port) => secureGet(port, '/big.bin')
  )
  expect(body.equals(big)).toBe(true)
  expect(sent).toEqual([{ bytes: big.length, zeroCopy: false, complete: true }])
})

it('reports streams behind compression middleware', async () => {
  const { body, sent } = await fetchRecording(
    (serve) => [express().use(compression({ filter: () => true })).use(serve)],
    async (port) => (await request(port, '/big.bin')).body
  )
  expect(body.equals(big)).toBe(true)
  expect(sent).toEqual([{ bytes: big.length, zeroCopy: false, complete: true }])
})

it('is not called for HEAD, 304 or 404', async () => {
  const { sent } = await fetchRecording(
    (serve) => [express().use(serve)],
    async (port) => {
      await request(port, '/big.bin', { method: 'HEAD' })
      const { headers } = await request(port, '/hello.txt')
      await request(port, '/hello.txt', { headers: { 'if-none-match': headers.etag } })
      await request(port, '/missing.txt')
    }
  )
  expect(sent).toEqual([{ bytes: FILES['hello.txt'].length, zeroCopy: zcopy.zeroCopyAvailable, complete: true }])
})

// A client that reads the first bytes of huge.bin (more than the socket buffers
// hold) and goes away.
function getAndLeave (port, secure) {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: '/huge.bin', agent: false, rejectUnauthorized: false }
    const req = (secure ? https : http).get(options, (res) => {
      res.once('data', () => {
        req.destroy()
        resolve()
      })
    })
    req.on('error', (err) => { if (!req.destroyed) reject(err) })
  })
}

for (const secure of [false, true]) {
  it(`a client that goes away mid-body${secure ? ' (TLS)' : ''}: called once, complete false, the bytes sent until then`, async () => {
    const { sent } = await fetchRecording(
      (serve) => secure ? [null, https.createServer(tls, express().use(serve))] : [express().use(serve)],
      (port) => getAndLeave(port, secure)
    )
    expect(sent).toEqual([{ bytes: expect.any(Number), zeroCopy: !secure && zcopy.zeroCopyAvailable, complete: false }])
    expect(sent[0].bytes).toBeGreaterThan(0)
    expect(sent[0].bytes).toBeLessThan(HUGE)
  })
}

it('rejects an onSent that is not a function', () => {
  expect(() => zcopy.serveStatic(tree.root, { onSent: 1 })).toThrow(TypeError)
})

// The memory cache answers within the middleware's call, sendfile after it: an
// onSent that throws is the middleware's error either way (next(err), as any
// error after the headers went out), never an unhandled rejection.
it('an onSent that throws: its error reaches next(err), for a body from memory as for one sent by sendfile', async () => {
  const reports = []
  const errors = []
  const serve = zcopy.serveStatic(tree.root, {
    onSent: (res, sent) => {
      reports.push(sent)
      throw new Error('onSent failed')
    }
  })
  const server = await listen((req, res) => serve(req, res, (err) => errors.push(err)))
  const settled = async (count) => {
    for (const deadline = Date.now() + 10_000; errors.length < count && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  try {
    const { body } = await request(server.port, '/big.bin')
    expect(body.equals(big)).toBe(true)
    await settled(1)
    // hello.txt is kept in memory from its second request on (once read).
    for (let i = 0; i < 50 && !reports.some((sent) => sent.fromMemory); i++) {
      const { body } = await request(server.port, '/hello.txt')
      expect(body.toString()).toBe(FILES['hello.txt'])
      await settled(reports.length)
    }
  } finally {
    await server.close()
  }
  expect(reports[0].zeroCopy).toBe(zcopy.zeroCopyAvailable)
  expect(reports.some((sent) => sent.fromMemory)).toBe(true)
  expect(errors).toHaveLength(reports.length)
  for (const err of errors) expect(err.message).toBe('onSent failed')
})
