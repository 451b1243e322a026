// zcopy serve collects once a crowd of connections has gone (bin/lib/serve/
// collect-after-crowds.js): V8 left what 1,000 stalled TLS clients held for
// 10 s to more than 60 s after they went, or until the next wave (issue 47).
// A real zcopy serve, real connections on loopback; the collections it asks
// for are seen through a 'gc' observer loaded into it (fixtures/cli/
// forced-collections.cjs). Fewer connections than a crowd, or a crowd that
// stays, cause none; a crowd that goes causes one, a couple of seconds later.
import { once } from 'node:events'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStderr } from './cli.mjs'

const { CROWD } = createRequire(import.meta.url)('../../bin/lib/serve/collect-after-crowds.js')
const OBSERVER = fileURLToPath(new URL('../fixtures/cli/forced-collections.cjs', import.meta.url))
const MARK = 'forced collection'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// `count` connections to `url`. `answered`: each has had one request
// answered (it is idle then, until the server's keep-alive timeout closes it);
// otherwise each has sent the start of a request head and waits in the
// middle of it (zcopy serve's idle and head timeouts are 60 s, like nginx's).
async function connections (url, count, { answered }) {
  const { hostname, port } = new URL(url)
  return Promise.all(Array.from({ length: count }, async () => {
    const socket = net.connect(Number(port), hostname)
    await once(socket, 'connect')
    socket.write(`GET /hello.txt HTTP/1.1\r\nHost: ${hostname}\r\n${answered ? '\r\n' : ''}`)
    if (answered) await once(socket, 'data')
    return socket
  }))
}

async function closeAll (sockets) {
  await Promise.all(sockets.map((socket) => {
    const closed = once(socket, 'close')
    socket.destroy()
    return closed
  }))
}

describe('zcopy serve after a crowd', () => {
  const root = makeRoot({ 'hello.txt': 'hello\n' })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  test('no collection for a few connections or while a crowd stays; one once it went', async () => {
    const serve = await startServe(root, ['--quiet'], { env: { NODE_OPTIONS: `--require ${OBSERVER}` } })
    try {
      await closeAll(await connections(serve.url, CROWD / 2, { answered: true }))
      const crowd = await connections(serve.url, CROWD + 16, { answered: false })
      await sleep(4000) // twice the quiet period
      expect(serve.cli.stderr()).not.toContain(MARK)
      await closeAll(crowd)
      await waitForStderr(serve.cli, new RegExp(MARK), { within: 15_000 }) // a failure still stops the server
    } finally {
      await serve.stop()
    }
  }, 30_000)
})
