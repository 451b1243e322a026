// zcopy.protectServer on Node's own HTTPS servers (issue 23.1): pipelined
// requests over TLS while a response is backed up get every response whole (Node
// alone cuts it: HPE_PAUSED), and sockets whose client reset them are reaped.
import { afterEach, describe, expect, test } from 'vitest'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import zcopy from '../../lib/index.js'
import { tls } from '../support/http.mjs'
import { pipelinedTrap, resetTrap, settle } from './tls-clients.mjs'

const SERVER = fileURLToPath(new URL('./children/tls-trap-server.mjs', import.meta.url))
let child = null
afterEach(() => child?.kill())

async function startTrapServer (kind, timeoutMs) {
  child = fork(SERVER, ['protected', kind, String(timeoutMs)])
  const [{ port }] = await once(child, 'message')
  const stats = async () => {
    child.send({ cmd: 'stats' })
    return (await once(child, 'message'))[0]
  }
  return { port, stats }
}

describe.each(['https', 'h2'])('protectServer on %s (HTTP/1.1 over TLS)', (kind) => {
  test('pipelined requests while a 32 MiB response is unread: every response whole, no HPE_PAUSED', async () => {
    const { port, stats } = await startTrapServer(kind, 60000)
    // The shape (two TLS writes while the server is busy), then two
    // records in one TCP write.
    for (const shape of [{ sameTcpWrite: false, waitMs: 20 }, { sameTcpWrite: false, waitMs: 20 }, { sameTcpWrite: true }]) {
      const { responses, cut } = await pipelinedTrap(port, tls.cert, { big: '/big', small: ['/a', '/b'], ...shape })
      expect(cut).toBe(false)
      expect(responses).toEqual([{ status: 200, length: 32 * 1024 * 1024 }, { status: 200, length: 1024 }, { status: 200, length: 1024 }])
    }
    expect((await stats()).paused).toBe(0)
    expect(await settle(async () => (await stats()).connections, 0)).toBe(0)
  }, 60000)

  test('400 clients that reset while answered: no socket left after the timeout', async () => {
    const { port, stats } = await startTrapServer(kind, 1000)
    await resetTrap(port, tls.cert, { path: '/reset', count: 400 })
    expect(await settle(async () => (await stats()).connections, 0, 5000)).toBe(0)
  }, 60000)
})

describe('protectServer', () => {
  test('sets the idle timeout and the head timeout (default 60 s; 0 leaves Node\'s)', () => {
    const server = http.createServer()
    expect(zcopy.protectServer(server)).toBe(server)
    expect(server.timeout).toBe(60000)
    expect(server.headersTimeout).toBe(60000)
    const quick = zcopy.protectServer(https.createServer(tls), { timeout: 2000 })
    expect([quick.timeout, quick.headersTimeout]).toEqual([2000, 2000])
    const untouched = zcopy.protectServer(http.createServer(), { timeout: 0 })
    expect([untouched.timeout, untouched.headersTimeout]).toEqual([0, 60000])
    expect(zcopy.protectServer(http2.createSecureServer(tls), { timeout: 3000 }).timeout).toBe(3000)
  })

  test('a connection that never sends a byte is closed after the timeout', async () => {
    const server = zcopy.protectServer(http.createServer(), { timeout: 300 })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = net.connect(server.address().port, '127.0.0.1')
    const started = Date.now()
    await once(socket, 'close')
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    server.close()
  })

  test('bad arguments: TypeError / RangeError with a code', () => {
    expect(() => zcopy.protectServer(null)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
    expect(() => zcopy.protectServer({})).toThrow(TypeError)
    expect(() => zcopy.protectServer(http.createServer(), null)).toThrow(TypeError)
    expect(() => zcopy.protectServer(http.createServer(), { timeout: -1 })).toThrow(expect.objectContaining({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE' }))
    expect(() => zcopy.protectServer(http.createServer(), { timeout: '5s' })).toThrow(TypeError)
  })
})
