// zcopy serve's connection tracking (bin/lib/serve/shutdown.js), which the
// graceful stop uses, must not hold a connection once it closed. A client that
// goes away in the middle of a response closes its socket before the response
// emits 'close'; the tracker used to count that response down into an entry
// for the closed socket (0 in flight), and kept it, with everything the socket
// still referenced, for the life of the process: a crowd of clients that stop
// reading and go left their sockets, their TLS state and the pieces of their
// bodies behind, wave after wave (issue 47: 1,000 stalled TLS clients left
// 20 MiB of V8 heap and 9 MiB of Buffers). Real servers, real clients on
// loopback; whether the tracker still holds a socket is seen from outside, with
// a FinalizationRegistry and full collections.

import { once } from 'node:events'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import tls from 'node:tls'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { tls as certs } from '../support/http.mjs'

const require = createRequire(import.meta.url)
const { trackConnections } = require('../../bin/lib/serve/shutdown.js')

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')
const CLIENTS = 20

// Objects watched by a FinalizationRegistry (not WeakRefs: deref() keeps its
// object alive for the rest of the job). → { watch(object), live(): how many
// watched objects are left after full collections, 20 ms apart (what Node
// still does for a closed socket runs in between), until none or `rounds`
// went by }.
function collectable () {
  let watched = 0
  let collected = 0
  const registry = new FinalizationRegistry(() => { collected++ })
  return {
    watch (object) {
      watched++
      registry.register(object, null)
    },
    async live (rounds = 100) {
      for (let round = 0; round < rounds && collected < watched; round++) {
        gc()
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return watched - collected
    }
  }
}

// A server tracked as zcopy serve tracks it, whose handler starts a body it
// never finishes; CLIENTS clients that ask and then go. → { live, waitingFor }:
// how many of the server's sockets are still held once they all closed, and
// what a drain would then wait for.
async function clientsThatGo (server, connect) {
  const drain = trackConnections(server)
  const sockets = collectable()
  const closed = []
  server.on('request', (req, res) => {
    sockets.watch(req.socket)
    closed.push(once(res, 'close'))
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    res.write(Buffer.alloc(64 * 1024))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    for (let i = 0; i < CLIENTS; i++) {
      const socket = await connect(server.address().port)
      socket.write('GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n')
      await once(socket, 'data')
      socket.destroy()
    }
    await Promise.all(closed)
    const waitingFor = drain.waitingFor()
    return { live: await sockets.live(), waitingFor }
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

describe('zcopy serve: connection tracking', () => {
  test('HTTP/1.1: a client gone mid-response leaves nothing held, nothing to wait for', async () => {
    const { live, waitingFor } = await clientsThatGo(http.createServer(), async (port) => {
      const socket = net.connect(port, '127.0.0.1')
      await once(socket, 'connect')
      return socket
    })
    expect(waitingFor).toEqual({ responses: 0, sessions: 0 })
    expect(live).toBe(0)
  })

  test('HTTPS: the same over TLS', async () => {
    const { live, waitingFor } = await clientsThatGo(https.createServer({ cert: certs.cert, key: certs.key }), async (port) => {
      const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false })
      await once(socket, 'secureConnect')
      return socket
    })
    expect(waitingFor).toEqual({ responses: 0, sessions: 0 })
    expect(live).toBe(0)
  })
})
