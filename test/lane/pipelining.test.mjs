// HTTP/1.1 pipelining behind an application's own server, bounded as nginx
// bounds it (issue 62, item 3): zcopy.nativeLane(server) in front of
// serveStatic behind node:http and behind Express reads one request of a
// connection at a time, and the next only once the answer to this one is
// written. Behind node:http alone, Node parses a whole read of the socket
// before zcopy sees a request, so a client that pipelines in one write has
// every request of that read parsed and held (test/http/pipelining-bound.test.mjs
// bounds what is held then); with the lane, the rest waits unparsed in the
// kernel's buffers and the lane's own. The server
// runs in a child process (test/http/children/pipelining-server.mjs, kinds
// http+lane and express+lane, with +offer: serveStatic's onReplayable is
// lane.offer, and the lane answers in C what it was offered) that counts the
// requests reaching the app; the clients are raw sockets:
// - clients that pipeline 33 or 2,000 requests for a big file in one write
//   and never read: the app sees the first request of each connection alone;
// - 200 of them, each its own target: the heap holds almost nothing per
//   connection, the lane sending the stalled body alone (the lane's buffers,
//   in C, are not in it: bench/http/pipelined.js reads RSS);
// - a client that pipelines a mix and reads gets every answer in order, byte
//   for byte (files by sendfile, from memory, HEAD, 304, ranges, 404, 416),
//   and with +offer the lane answers some of them itself.

import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { zeroCopyAvailable } from '../../lib/index.js'
import { MiB, REQUEST, connect, exchange, servedRoot, settledCount, startServer } from '../support/pipelining.mjs'

const CONNECTIONS = 4
// Heap held per connection that pipelined 33 requests for the big file (each
// its own target: every first request lent) and reads nothing, after full
// collections: the lane sends the stalled body alone and Node's response
// ended, so what is left is the lane's promise of how the body ends, and with
// +offer the lane's row for the target; a fixed ~140 KiB comes and goes
// between two measures (±0.7 KiB a connection at 200). Measured 2026-12-07 as
// this test measures it (200 connections, the same run once before): 1.1-1.8
// KiB in all four kinds; before the lane sent bodies alone (7fe2d3a), while
// Node held the lent request until its body went: http+lane 6.8-8.7 KiB,
// express+lane 10.5-11.5 (at 20 connections on 2026-12-06 without the lane:
// node:http 62.5-62.9 KiB, the 33 requests held; Express 174-182 KiB).
const HEAP_PER_CONNECTION = 4 * 1024
const HEAP_CONNECTIONS = 200

let root
let files

beforeAll(() => {
  ({ root, files } = servedRoot('zcopy-lane-pipelining-'))
})

afterAll(() => rmSync(root, { recursive: true, force: true }))

// Connections that each write `depth` requests for the big file in one write
// and read nothing; with a `tag`, each its own target (`?TAG-N`), so that no
// answer to one is replayed to another: each first request is lent (what an
// attacker would send). → the sockets
async function pipelineAndStall (port, connections, depth, tag = null) {
  const sockets = await Promise.all(Array.from({ length: connections }, () => connect(port)))
  sockets.forEach((socket, i) => {
    socket.pause()
    socket.write(REQUEST(tag === null ? '/big.bin' : `/big.bin?${tag}-${i}`).repeat(depth))
  })
  return sockets
}

// Until the app has seen `count` requests (or `withinMs` passed).
async function reached (server, count, withinMs = 20_000) {
  const deadline = Date.now() + withinMs
  while (await server.handled() < count && Date.now() < deadline) await sleep(50)
}

describe.runIf(zeroCopyAvailable)('the native lane in front of node:http and Express', () => {
  describe.each(['http+lane', 'http+lane+offer', 'express+lane', 'express+lane+offer'])('%s', (kind) => {
    // Without the lane (kinds http and express, run by hand 2026-12-06, 4
    // connections): 33 requests each → 132 reached the app (33 a connection,
    // 1 answered and 32 waiting their turn); 2,000 each → 7,708 (1,927 a
    // connection: one read of Node's, 64 KiB, parsed whole, then the
    // connection closed for more than 32 waiting). With the lane: 4.
    test.each([33, 2000])('clients that pipeline %i requests for a big file in one write and never read: the app sees the first of each alone', async (depth) => {
      const server = await startServer(kind, root)
      const sockets = await pipelineAndStall(server.port, CONNECTIONS, depth, 'depth')
      try {
        // Each connection's first request is lent to the server (the lane has
        // no answer for its target), whose body stalls; the lane reads no
        // next request until it is written.
        await reached(server, CONNECTIONS)
        expect(await settledCount(server, CONNECTIONS)).toBe(CONNECTIONS)
      } finally {
        for (const socket of sockets) socket.destroy()
        await server.kill()
      }
    })

    test(`${HEAP_CONNECTIONS} clients that pipeline 33 requests and never read: Node holds none of their requests`, async () => {
      const server = await startServer(kind, root)
      try {
        // The same once first, its code compiled and its first-time objects
        // made, on connections then closed.
        for (const socket of await pipelineAndStall(server.port, HEAP_CONNECTIONS, 33, 'warm')) socket.destroy()
        await sleep(300)
        const handledBefore = await server.handled()
        const before = await server.heap()
        const sockets = await pipelineAndStall(server.port, HEAP_CONNECTIONS, 33, 'held')
        try {
          await reached(server, handledBefore + HEAP_CONNECTIONS)
          expect(await settledCount(server, Infinity, 1000) - handledBefore).toBe(HEAP_CONNECTIONS)
          const perConnection = (await server.heap() - before) / HEAP_CONNECTIONS
          expect(perConnection).toBeLessThan(HEAP_PER_CONNECTION)
        } finally {
          for (const socket of sockets) socket.destroy()
        }
      } finally {
        await server.kill()
      }
    })

    test('a client that pipelines a mix and reads gets every answer in order, byte for byte, and the connection goes on', async () => {
      const server = await startServer(kind, root)
      const socket = await connect(server.port)
      try {
        const [first] = await exchange(socket, [{ path: '/mid.bin' }])
        const etag = first.headers.etag
        expect(etag).toBeTruthy()
        const batch = [
          { path: '/mid.bin', expect: { status: 200, body: files['mid.bin'] } }, // by sendfile
          { path: '/small.txt', expect: { status: 200, body: files['small.txt'] } }, // from memory
          { path: '/mid.bin', method: 'HEAD', expect: { status: 200, length: files['mid.bin'].length } },
          { path: '/mid.bin', headers: { 'If-None-Match': etag }, expect: { status: 304 } },
          { path: '/mid.bin', headers: { Range: 'bytes=100-199999' }, expect: { status: 206, body: files['mid.bin'].subarray(100, 200000) } },
          { path: '/missing.bin', expect: { status: 404, body: Buffer.from('not found') } },
          { path: '/small.txt', headers: { Range: 'bytes=99999-' }, expect: { status: 416 } },
          { path: '/small.txt', method: 'HEAD', expect: { status: 200, length: files['small.txt'].length } },
          { path: '/big.bin', headers: { Range: 'bytes=0-1048575' }, expect: { status: 206, body: files['big.bin'].subarray(0, MiB) } }
        ]
        const handledBefore = await server.handled()
        let sent = 0
        for (let round = 0; round < 3; round++) {
          const requests = [...batch, ...batch]
          sent += requests.length
          const responses = await exchange(socket, requests)
          expect(responses.length).toBe(requests.length)
          responses.forEach((response, i) => {
            const expected = requests[i].expect
            expect(`${i} ${response.status}`).toBe(`${i} ${expected.status}`)
            if (expected.length !== undefined) expect(Number(response.headers['content-length'])).toBe(expected.length)
            if (expected.body !== undefined) expect(response.body.equals(expected.body), `${i} ${requests[i].path}`).toBe(true)
          })
        }
        // Without offer, every request was lent to the app, one at a time;
        // with it, the lane answered itself, from C, every one it had been
        // offered before (measured 2026-12-06: 18 of 54 reached the app, 10
        // in the first round, then the 404s and 416s alone): the answers
        // checked above are the lane's as much as Node's.
        const handled = await server.handled() - handledBefore
        if (kind.endsWith('+offer')) expect(handled).toBeLessThan(sent / 2)
        else expect(handled).toBe(sent)
      } finally {
        socket.destroy()
        await server.kill()
      }
    })
  })
})
