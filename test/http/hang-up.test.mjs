// Clients that hang up, on every transport where the body goes through the
// response object or HTTP/2: HTTPS, compression() on node:http and on Express, h2c
// and h2 over TLS. The server runs in a child process, so a crash is the child
// exiting; after each attack it must still be up, serve byte-exact bodies and
// have the descriptors it started with.

import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  FILES, HTTP2, download, h1Cut, h2Cut, makeRoot, randomCut, settledFds, startServer
} from './children/hangup-harness.mjs'

const MIB = FILES['mib.bin'].length
const WRK = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
  }
})()

let tree

beforeAll(async () => {
  tree = await makeRoot()
})

afterAll(() => tree.cleanup())

describe.each(['https', 'compression', 'express', 'h2c', 'h2'])('%s', (kind) => {
  const h2 = HTTP2.has(kind)
  let server, baseline

  beforeAll(async () => {
    server = await startServer(kind, tree.root)
    // warm: the files in the open-file cache, every lazy module loaded
    for (const name of Object.keys(FILES)) expect((await download(kind, server.port, name)).status).toBe(200)
    baseline = await settledFds(server)
  })

  afterAll(async () => {
    if (server.status() === null) expect(await server.close()).toBe(true)
    await server.kill()
  })

  // The server is up, sends byte-exact bodies and holds no descriptor more than at
  // the start.
  async function expectHealthy () {
    expect(server.status()).toBeNull()
    for (const name of ['one.bin', 'mib.bin']) {
      const answer = await download(kind, server.port, name)
      expect(answer.status).toBe(200)
      expect(answer.body.equals(FILES[name])).toBe(true)
    }
    expect(await settledFds(server, baseline)).toBeLessThanOrEqual(baseline)
  }

  test('early close on a 1-byte file', async () => {
    const whens = h2 ? ['at-once', 'response', 1] : ['at-once', 'tick', 1]
    for (let i = 0; i < 20; i++) {
      for (const when of whens) {
        if (h2) {
          await h2Cut(kind, server.port, 'one.bin', when)
          await h2Cut(kind, server.port, 'one.bin', when, { session: true })
        } else {
          await h1Cut(kind, server.port, ['one.bin'], when)
          await h1Cut(kind, server.port, ['one.bin'], when, true)
        }
      }
    }
    await expectHealthy()
  })

  test('cuts at random points of a 1 MiB body', async () => {
    for (let i = 0; i < 15; i++) {
      if (h2) {
        await h2Cut(kind, server.port, 'mib.bin', randomCut(MIB / 2))
        await h2Cut(kind, server.port, 'mib.bin', randomCut(MIB / 2), { session: true })
      } else {
        await h1Cut(kind, server.port, ['mib.bin'], randomCut(MIB / 2))
        await h1Cut(kind, server.port, ['mib.bin'], randomCut(MIB / 2), true)
      }
    }
    await expectHealthy()
  })

  test.skipIf(h2)('pipelining + reset', async () => {
    const paths = ['mib.bin', 'one.bin', 'small.txt', 'mib.bin', 'one.bin', 'mib.bin']
    for (let i = 0; i < 15; i++) {
      await h1Cut(kind, server.port, paths, i % 3 === 0 ? 'at-once' : randomCut(MIB), true)
    }
    await expectHealthy()
  })

  test.runIf(h2)('many streams on one session, then the session is cut', async () => {
    for (let i = 0; i < 10; i++) {
      await h2Cut(kind, server.port, i % 2 ? 'one.bin' : 'mib.bin', i % 2 ? 'at-once' : randomCut(MIB / 4), { streams: 8, session: i % 3 === 0 })
    }
    await expectHealthy()
  })

  test('64 concurrent connections cut mid-body', async () => {
    const cuts = Array.from({ length: 64 }, (_, i) => h2
      ? h2Cut(kind, server.port, 'mib.bin', randomCut(MIB / 2), { session: i % 2 === 0 })
      : h1Cut(kind, server.port, ['mib.bin'], randomCut(MIB / 2), i % 2 === 0))
    await Promise.all(cuts)
    await expectHealthy()
  })

  test.runIf(WRK && !h2)('wrk -c64 -d2s (it cuts bodies when it stops)', async () => {
    const scheme = kind === 'https' ? 'https' : 'http'
    const headers = kind === 'https' ? [] : ['-H', 'Accept-Encoding: gzip']
    execFileSync(WRK, ['-t1', '-c64', '-d2s', ...headers, `${scheme}://127.0.0.1:${server.port}/mib.bin`], { stdio: 'ignore' })
    await expectHealthy()
  })
})
