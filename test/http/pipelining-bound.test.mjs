// HTTP/1.1 pipelining answered one at a time, as nginx answers it (issue 62,
// item 3). A client that pipelines requests for a big file and never reads made
// the server parse and half answer every request it sent: the body goes out by
// sendfile, so Node never saw the connection back up (49 MiB per connection
// with a 100-byte file). Now a connection reads no further request while a
// body goes out by sendfile, and requests already read wait for their turn
// before serveStatic (or sendFile) looks at them (lib/http/delivery/one-at-a-time.js).
// The server (serveStatic behind node:http and behind Express, sendFile in a
// node:http handler) runs in a child process that counts the requests
// reaching zcopy; the clients are raw sockets. A client that reads gets every pipelined answer, in order, byte
// for byte: files by sendfile, from memory, HEAD, 304, ranges, 404, 416 and
// a compressed variant. At most 32 requests of one connection wait for their
// turn: one more closes the connection, and the requests it held are let go.

import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { zeroCopyAvailable } from '../../lib/index.js'
import { MiB, REQUEST, connect, exchange, servedRoot, settledCount, startServer as startChild } from '../support/pipelining.mjs'

// Node parses what one read of the connection brought (up to 64 KiB) whole: a
// pause stops the next read, not the parse of this one. Requests of this size
// fill a read with 1,928 of them.
const PER_READ = Math.ceil(64 * 1024 / REQUEST('/big.bin').length)
// Requests of one connection that may wait for their turn; one more closes it.
const MAX_WAITING = 32

// Heap per request waiting for its turn, after full collections: the
// framework's request and response objects (node:http's ~1.5 KiB, Express's
// ~5 KiB), with room. Measured 2026-12-03: node:http 1.9–2.1 KiB, Express
// 5.4–5.6, sendFile 2.8–2.9; before, each was answered up to the wait for its
// socket: 6.5, 10.0 and 6.3 KiB.
const HEAP_PER_WAITING = { http: 4096, express: 8192, sendFile: 4096 }
// Heap of the first response's body under way: without the addon, the pieces
// of its copy (measured 2026-12-04: ~120 KiB; with sendfile, none).
const UNDER_WAY = 256 * 1024

let root
let files

beforeAll(() => {
  ({ root, files } = servedRoot('zcopy-pipelining-', {
    'text.js': Buffer.from(Array.from({ length: 4000 }, (_, i) => `export const value${i} = ${i} * 2\n`).join(''))
  }))
})

afterAll(() => rmSync(root, { recursive: true, force: true }))

const startServer = (kind) => startChild(kind, root)

describe.each(['http', 'express', 'sendFile'])('%s', (kind) => {
  test('a client that pipelines and never reads: the next requests are not read while the body goes out', async () => {
    const server = await startServer(kind)
    const socket = await connect(server.port)
    try {
      socket.write(REQUEST('/big.bin'))
      // The head comes once the body is under way; then the client stops reading.
      await once(socket, 'data')
      socket.pause()
      socket.write(REQUEST('/big.bin').repeat(20000))
      // With sendfile the connection is not read while the body goes out: the
      // first request alone. Without the addon (a copy Node writes, and Node's
      // own pause once it backs up) the requests of one read, waiting their turn.
      // Before: all 20,000 (a sendfile body never backs Node up).
      const bound = zeroCopyAvailable ? 1 : 1 + PER_READ
      expect(await settledCount(server, bound)).toBeLessThanOrEqual(bound)
    } finally {
      socket.destroy()
      await server.kill()
    }
  })

  test('clients that pipeline 20,000 requests at once and never read: one read of them each', async () => {
    const server = await startServer(kind)
    const sockets = await Promise.all(Array.from({ length: 4 }, () => connect(server.port)))
    try {
      for (const socket of sockets) {
        socket.pause()
        socket.write(REQUEST('/big.bin').repeat(20000))
      }
      // The first read of each connection is parsed whole (its first request
      // starts the body, the others wait their turn), and at most one more if
      // that read held the first request alone. Before: all 80,000.
      const bound = sockets.length * (1 + 2 * PER_READ)
      await sleep(200)
      expect(await settledCount(server, bound)).toBeLessThanOrEqual(bound)
    } finally {
      for (const socket of sockets) socket.destroy()
      await server.kill()
    }
  })

  test('up to 32 requests wait for their turn: Node\'s objects alone, no answer under way', async () => {
    const server = await startServer(kind)
    const socket = await connect(server.port)
    try {
      await warm(server)
      const before = await server.heap()
      const handledBefore = await server.handled()
      socket.pause()
      socket.write(REQUEST('/big.bin').repeat(1 + MAX_WAITING)) // one read: the first answered, 32 waiting
      await sleep(200)
      const handled = await settledCount(server, Infinity, 1000) - handledBefore
      expect(handled).toBe(1 + MAX_WAITING)
      expect(await server.heap() - before).toBeLessThan(UNDER_WAY + MAX_WAITING * HEAP_PER_WAITING[kind])
      expect(socket.destroyed).toBe(false)
    } finally {
      socket.destroy()
      await server.kill()
    }
  })

  test('one request past 32 waiting closes the connection, and what it held is let go', async () => {
    const server = await startServer(kind)
    try {
      await warm(server)
      await attack(server) // the closing path run once (its code compiled)
      const before = await server.heap()
      const handled = await attack(server)
      expect(handled).toBeGreaterThan(1 + MAX_WAITING)
      // Before: the 1,500 requests held for as long as the send timeout
      // allowed (2–6 KiB each, ~3–8 MiB). Now garbage: what is left is noise
      // (60–290 KiB measured under load), an eighth of what they held.
      expect(await server.heap() - before).toBeLessThan(1500 * HEAP_PER_WAITING[kind] / 8)
    } finally {
      await server.kill()
    }
  })

  test('a client that reads gets every pipelined answer in order, byte for byte, and the connection goes on', async () => {
    const server = await startServer(kind)
    let socket = await connect(server.port)
    try {
      // The ETag to revalidate with, and the compressed variant made (it is
      // then answered from memory). On a busy machine the variant can take
      // tens of seconds (it is made at idle priority, then hurried), longer
      // than the server keeps an idle connection open: the pipelined rounds
      // go on a connection of their own, opened once it is made.
      const compressed = kind !== 'sendFile' // sendFile's variants go to a folder, by sendfile
      const first = await exchange(socket, [{ path: '/mid.bin' }, { path: '/text.js', headers: { 'Accept-Encoding': 'br' } }])
      if (compressed) await server.compressed()
      socket.destroy()
      socket = await connect(server.port)
      const etag = first[0].headers.etag
      expect(etag).toBeTruthy()
      const batch = [
        { path: '/mid.bin', expect: { status: 200, body: files['mid.bin'] } },
        { path: '/small.txt', expect: { status: 200, body: files['small.txt'] } },
        { path: '/mid.bin', method: 'HEAD', expect: { status: 200, length: files['mid.bin'].length } },
        { path: '/mid.bin', headers: { 'If-None-Match': etag }, expect: { status: 304 } },
        { path: '/mid.bin', headers: { Range: 'bytes=100-199999' }, expect: { status: 206, body: files['mid.bin'].subarray(100, 200000) } },
        { path: '/missing.bin', expect: { status: 404, body: Buffer.from('not found') } },
        { path: '/small.txt', headers: { Range: 'bytes=99999-' }, expect: { status: 416 } },
        compressed
          ? { path: '/text.js', headers: { 'Accept-Encoding': 'br' }, expect: { status: 200, encoding: 'br', body: files['text.js'] } }
          : { path: '/text.js', expect: { status: 200, body: files['text.js'] } },
        { path: '/small.txt', method: 'HEAD', expect: { status: 200, length: files['small.txt'].length } },
        { path: '/big.bin', headers: { Range: 'bytes=0-1048575' }, expect: { status: 206, body: files['big.bin'].subarray(0, MiB) } }
      ]
      for (let round = 0; round < 3; round++) {
        const requests = [...batch, ...batch, ...batch]
        const responses = await exchange(socket, requests)
        expect(responses.length).toBe(requests.length)
        responses.forEach((response, i) => {
          const expected = requests[i].expect
          expect(`${i} ${response.status}`).toBe(`${i} ${expected.status}`)
          if (expected.length !== undefined) expect(Number(response.headers['content-length'])).toBe(expected.length)
          if (expected.encoding !== undefined) expect(response.headers['content-encoding']).toBe(expected.encoding)
          if (expected.body !== undefined) {
            const body = expected.encoding === 'br' ? brotliDecompressSync(response.body) : response.body
            expect(body.equals(expected.body)).toBe(true)
          }
        })
      }
    } finally {
      socket.destroy()
      await server.kill()
    }
  }, 120_000) // the variant made at idle priority first: ~30 s measured with three busy loops on 2 cores
})

// The server's first answers done (its file opened and remembered, its code
// compiled), on a connection of their own, so that the heap measured next is
// the requests'.
async function warm (server) {
  const socket = await connect(server.port)
  for (let i = 0; i < 3; i++) await exchange(socket, Array.from({ length: 20 }, () => ({ path: '/big.bin', method: 'HEAD' })))
  socket.destroy()
  await sleep(100)
}

// A connection that pipelines 1,500 requests in one write and reads nothing
// until the server closes it, which it does once 33 of them wait for their
// turn. → the requests that reached zcopy.
async function attack (server) {
  const handledBefore = await server.handled()
  const socket = await connect(server.port)
  socket.pause()
  // One write, taken by the server in one read of its socket, or two.
  socket.write(REQUEST('/big.bin').repeat(1500))
  await sleep(200)
  const handled = await settledCount(server, Infinity, 1000) - handledBefore
  if (handled > 1 + MAX_WAITING && !socket.destroyed) {
    // The client sees the connection end once it reads (a reset: it had sent
    // bytes the server never read). Not once(): the reset's 'error' would
    // reject it.
    const closed = new Promise((resolve) => socket.once('close', resolve))
    socket.resume()
    await closed
  }
  socket.destroy()
  return handled
}
