// What zcopy serve does about a crowd's memory (bin/lib/serve/crowd-memory.js),
// issue 47. While a crowd of connections (and HTTP/2 streams) stays, it trims the C
// heap whenever nothing new has come for a couple of seconds: the holes the
// TLS handshakes and first writes left go back to the system while the crowd
// holds on. And it collects once the crowd has gone: V8 left what 1,000 stalled
// TLS clients held for 10 s to more than 60 s after they went, or until the
// next wave. A real zcopy serve, real connections on loopback; the collections
// it asks for are seen through a 'gc' observer loaded into it (fixtures/cli/
// forced-collections.cjs), its trims through a wrapper of the addon's
// trimMemory (fixtures/cli/heap-trims.cjs). Fewer than a crowd cause neither; a
// crowd that stays, a trim and no collection; a crowd that goes, a collection,
// a couple of seconds later.
import { once } from 'node:events'
import fs from 'node:fs'
import http2 from 'node:http2'
import { createRequire } from 'node:module'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStderr } from './cli.mjs'

const { CROWD } = createRequire(import.meta.url)('../../bin/lib/serve/crowd-memory.js')
const OBSERVER = fileURLToPath(new URL('../fixtures/cli/forced-collections.cjs', import.meta.url))
const TRIMS = fileURLToPath(new URL('../fixtures/cli/heap-trims.cjs', import.meta.url))
const CERT = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const KEY = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const MARK = 'forced collection'
const TRIMMED = 'C heap trimmed by crowd-memory.js'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// `count` connections to `url`, each sending `head`; `answered`: each waits
// for the first bytes of its answer.
async function connections (url, count, head, { answered = false } = {}) {
  const { hostname, port } = new URL(url)
  return Promise.all(Array.from({ length: count }, async () => {
    const socket = net.connect(Number(port), hostname)
    await once(socket, 'connect')
    socket.write(head(hostname))
    if (answered) await once(socket, 'data')
    return socket
  }))
}

const request = (path) => (host) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`
// The start of a request head: the connection waits in the middle of it
// (zcopy serve's idle and head timeouts are 60 s, like nginx's).
const unfinished = (host) => `GET /hello.txt HTTP/1.1\r\nHost: ${host}\r\n`
// A request for the 8 MiB file, of which nothing is read: its response stays
// under way (bigger than what the kernel's buffers of an unread connection take).
const stalled = request('/big.bin')

async function closeAll (sockets) {
  await Promise.all(sockets.map((socket) => {
    const closed = once(socket, 'close')
    socket.destroy()
    return closed
  }))
}

describe('zcopy serve after a crowd', () => {
  const root = makeRoot({ 'hello.txt': 'hello\n', 'big.bin': Buffer.alloc(8 * 1024 * 1024, 'z') })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  // Node's own connections: the native lane holds idle ones and unfinished
  // heads in C (a few hundred bytes each, freed at their close), and gives
  // Node only the requests it lends or hands off.
  test('no collection for a few connections or while a crowd stays; one once it went', async () => {
    const serve = await startServe(root, ['--quiet', '--no-native-lane'], { env: { NODE_OPTIONS: `--require ${OBSERVER}` } })
    try {
      await closeAll(await connections(serve.url, CROWD / 2, request('/hello.txt'), { answered: true })) // idle once answered
      const crowd = await connections(serve.url, CROWD + 16, unfinished)
      await sleep(4000) // twice the quiet period
      expect(serve.cli.stderr()).not.toContain(MARK)
      await closeAll(crowd)
      await waitForStderr(serve.cli, new RegExp(MARK), { within: 15_000 }) // a failure still stops the server
    } finally {
      await serve.stop()
    }
  }, 30_000)

  test.runIf(native !== null)('a crowd that stays: the C heap trimmed once nothing new came for a while, and no collection', async () => {
    const serve = await startServe(root, ['--quiet'], { env: { NODE_OPTIONS: `--require ${TRIMS} --require ${OBSERVER}` } })
    const sockets = []
    try {
      sockets.push(...await connections(serve.url, CROWD / 2, stalled))
      await sleep(3000) // more than the quiet period
      expect(serve.cli.stderr()).not.toContain(TRIMMED) // no crowd yet
      sockets.push(...await connections(serve.url, CROWD / 2 + 16, stalled))
      await waitForStderr(serve.cli, new RegExp(TRIMMED), { within: 15_000 })
      await sleep(3000) // nothing new: no second trim
      expect(serve.cli.stderr().match(new RegExp(TRIMMED, 'g'))).toHaveLength(1)
      expect(serve.cli.stderr()).not.toContain(MARK)
      await closeAll(sockets.splice(0))
      await waitForStderr(serve.cli, new RegExp(MARK), { within: 15_000 })
    } finally {
      await closeAll(sockets)
      await serve.stop()
    }
  }, 40_000)

  test.runIf(native !== null)('HTTP/2: the streams count, so a crowd on a few sessions is one too', async () => {
    const args = ['--quiet', '--http2', '--ssl-cert', CERT, '--ssl-key', KEY]
    const serve = await startServe(root, args, { env: { NODE_OPTIONS: `--require ${TRIMS}` } })
    const sessions = []
    try {
      // 4 sessions of 70 streams each for the 8 MiB file, none read: each
      // stream's window closes and it stays open.
      for (let i = 0; i < 4; i++) {
        const session = http2.connect(serve.url, { ca: fs.readFileSync(CERT) })
        session.on('error', () => {})
        sessions.push(session)
        for (let j = 0; j < 70; j++) session.request({ ':path': '/big.bin' }).on('error', () => {})
      }
      await waitForStderr(serve.cli, new RegExp(TRIMMED), { within: 15_000 })
    } finally {
      for (const session of sessions) session.destroy()
      await serve.stop()
    }
  }, 30_000)
})
