// What happens around the bytes: clients that leave, files that change or shrink
// under a transfer, descriptors that must close, methods that are not ours.

import { once } from 'node:events'
import { rename, rm, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import http from 'node:http'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { fdsUnder, listen, request } from '../support/http.mjs'
import { makeTree } from '../fixtures/http/tree.mjs'

const HUGE = 64 * 1024 * 1024 // beyond what loopback socket buffers hold

let tree

beforeAll(async () => {
  tree = await makeTree()
})

afterAll(() => tree.cleanup())

beforeEach(async () => {
  await writeFile(join(tree.root, 'huge.bin'), '')
  await truncate(join(tree.root, 'huge.bin'), HUGE) // sparse: zeros, no disk
})

// A server whose handler reports how each serveStatic call ended.
async function observedServer (options = {}) {
  const serve = zcopy.serveStatic(tree.root, options)
  const outcomes = []
  let notify = () => {}
  const app = await listen((req, res) => serve(req, res, (err) => {
    outcomes.push(err || null)
    notify()
    if (!res.headersSent) {
      res.statusCode = err ? err.status || 500 : 404
      res.end()
    }
  }))
  return {
    serve,
    app,
    nextOutcome: () => new Promise((resolve) => { notify = () => resolve(outcomes.at(-1)) }),
    async close () {
      await app.close()
      await serve.close()
    }
  }
}

// GET that pauses at the headers; → { res, req } once they arrived.
async function pausedDownload (port, path) {
  const req = http.get({ host: '127.0.0.1', port, path, agent: false })
  const [res] = await once(req, 'response')
  res.pause()
  req.on('error', () => {})
  return { req, res }
}

test('a client that disconnects mid-body: nothing thrown, descriptor released, server goes on', async () => {
  const server = await observedServer()
  try {
    for (let i = 0; i < 3; i++) {
      const { req, res } = await pausedDownload(server.app.port, '/huge.bin')
      expect(res.headers['content-length']).toBe(String(HUGE))
      res.resume()
      await once(res, 'data')
      req.destroy()
      await once(req, 'close')
    }
    const answer = await request(server.app.port, '/hello.txt')
    expect(answer.body.toString()).toBe('hello world\n')
  } finally {
    await server.close()
  }
  expect(fdsUnder(tree.base)).toEqual([])
})

test('a Writable whose write fails (as a response sink does when its client left): a rejection, never an uncaught error', async () => {
  const uncaught = []
  const record = (err) => uncaught.push(err)
  process.on('uncaughtException', record)
  try {
    for (const size of [1, 300 * 1024]) { // one chunk (the last), and two
      await writeFile(join(tree.root, 'sink.bin'), Buffer.alloc(size, 1))
      const sink = new Writable({
        write (chunk, encoding, callback) {
          setImmediate(callback, Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))
        }
      })
      await expect(zcopy.pipeFile(join(tree.root, 'sink.bin'), sink)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' })
      expect(sink.destroyed).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 20)) // the sink's 'error' comes a tick later
    }
  } finally {
    process.off('uncaughtException', record)
  }
  expect(uncaught).toEqual([])
})

test('a file truncated under its transfer: the connection is destroyed, never left hanging', async () => {
  const path = join(tree.root, 'huge.bin')
  let failure
  const app = await listen((req, res) => {
    zcopy.sendFile(req, res, path).catch((err) => { failure = err })
  })
  try {
    const { res } = await pausedDownload(app.port, '/')
    await truncate(path, 1024 * 1024)
    let received = 0
    res.on('data', (chunk) => { received += chunk.length })
    const closed = new Promise((resolve) => res.on('close', resolve))
    res.on('error', () => {}) // 'aborted': expected
    res.resume()
    await closed
    expect(res.complete).toBe(false)
    expect(received).toBeLessThan(HUGE)
    expect(failure.code).toBe('ERR_ZCOPY_TRUNCATED')
  } finally {
    await app.close()
  }
})

test('a replaced, rewritten, shrunk or deleted file is never served stale', async () => {
  const server = await observedServer()
  const file = join(tree.root, 'changing.txt')
  const get = () => request(server.app.port, '/changing.txt')
  try {
    await writeFile(file, 'first version\n')
    expect((await get()).body.toString()).toBe('first version\n')

    await writeFile(file + '.tmp', 'second, replaced by rename\n')
    await rename(file + '.tmp', file)
    expect((await get()).body.toString()).toBe('second, replaced by rename\n')

    await writeFile(file, 'third, rewritten in place\n') // same inode
    expect((await get()).body.toString()).toBe('third, rewritten in place\n')

    await truncate(file, 5)
    const shrunk = await get()
    expect(shrunk.headers['content-length']).toBe('5')
    expect(shrunk.body.toString()).toBe('third')

    await rm(file)
    expect((await get()).status).toBe(404)
  } finally {
    await server.close()
  }
  expect(fdsUnder(tree.base)).toEqual([])
})

test('the open-file cache keeps at most maxOpenFiles descriptors; 0 disables it', async () => {
  for (const maxOpenFiles of [2, 0]) {
    const server = await observedServer({ maxOpenFiles })
    try {
      for (const name of ['hello.txt', 'data.json', 'page.html', 'noext', 'dir/plain.txt']) {
        expect((await request(server.app.port, '/' + name)).status).toBe(200)
      }
      // evicted handles close asynchronously, right after their response (files
      // below the root: the root directory's own descriptor is kept to open them)
      await expect.poll(() => fdsUnder(tree.root + '/').length).toBeLessThanOrEqual(maxOpenFiles)
    } finally {
      await server.close()
    }
    expect(fdsUnder(tree.base)).toEqual([])
  }
})

test('methods: next() with fallthrough, 405 with Allow without it', async () => {
  const through = await observedServer()
  const strict = await observedServer({ fallthrough: false })
  try {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const outcome = through.nextOutcome()
      expect((await request(through.app.port, '/hello.txt', { method })).status).toBe(404)
      expect(await outcome).toBeNull()
      const refused = await request(strict.app.port, '/hello.txt', { method })
      expect(refused.status).toBe(405)
      expect(refused.headers.allow).toBe('GET, HEAD')
      expect(refused.headers['content-length']).toBe('0')
    }
  } finally {
    await through.close()
    await strict.close()
  }
})

test('errors after the file was found go to next(err), with their status', async () => {
  const server = await observedServer()
  try {
    const outcome = server.nextOutcome()
    const answer = await request(server.app.port, '/hello.txt', { headers: { range: 'bytes=500-' } })
    expect(answer.status).toBe(416)
    const err = await outcome
    expect(err.status).toBe(416)
    expect(err.headers).toEqual({ 'Content-Range': 'bytes */12' })
  } finally {
    await server.close()
  }
})
