// Pipelined requests on a keep-alive connection that the client resets: the
// responses queued behind the first never get a socket, so no write callback and
// no 'close' of their own. Each must still settle, release its open-file cache
// entry and its descriptors; close() of the middleware then resolves. The server
// runs in a child process (a crash is the child exiting).

import { afterAll, beforeAll, expect, test } from 'vitest'
import { FILES, download, h1Cut, makeRoot, randomCut, settledFds, startServer } from './children/hangup-harness.mjs'

const PIPELINE = ['mib.bin', 'one.bin', 'small.txt', 'mib.bin', 'one.bin', 'small.txt', 'mib.bin', 'one.bin',
  'mib.bin', 'small.txt', 'one.bin', 'mib.bin']

let tree

beforeAll(async () => {
  tree = await makeRoot()
})

afterAll(() => tree.cleanup())

test.each(['http', 'https', 'compression'])('%s: pipelined requests + reset, many times; close() resolves', async (kind) => {
  const server = await startServer(kind, tree.root)
  try {
    for (const name of Object.keys(FILES)) expect((await download(kind, server.port, name)).status).toBe(200)
    const baseline = await settledFds(server)
    for (let i = 0; i < 30; i++) {
      const when = i % 5 === 0 ? 'at-once' : i % 5 === 1 ? 'tick' : randomCut(2 * FILES['mib.bin'].length)
      await h1Cut(kind, server.port, PIPELINE, when, true)
    }
    // several connections at once, reset together
    await Promise.all(Array.from({ length: 16 }, () => h1Cut(kind, server.port, PIPELINE, randomCut(1 << 20), true)))
    expect(server.status()).toBeNull()
    expect((await download(kind, server.port, 'mib.bin')).body.equals(FILES['mib.bin'])).toBe(true)
    expect(await settledFds(server, baseline)).toBeLessThanOrEqual(baseline)
    // every cache entry released: close() resolves, and closes what it had open
    const closed = server.close()
    const late = new Promise((resolve) => setTimeout(resolve, 5000, 'close() did not resolve in 5 s'))
    expect(await Promise.race([closed, late])).toBe(true)
    expect(await settledFds(server, baseline - 3)).toBeLessThanOrEqual(baseline - 3)
  } finally {
    await server.kill()
  }
})
