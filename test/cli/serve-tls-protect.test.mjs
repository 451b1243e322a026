// zcopy serve against clients that stall, vanish or pipeline over TLS (issues
// 22.4 and 23.1): every pipelined response whole on HTTPS and on HTTP/2's
// HTTP/1.1, sockets reset by their client reaped, silent connections closed
// after --timeout on plain HTTP, HTTPS and HTTP/2.
import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import http2 from 'node:http2'
import net from 'node:net'
import tls from 'node:tls'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, runCli } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { pipelinedTrap, resetTrap, settle, socketCount } from '../http/tls-clients.mjs'

const cert = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const key = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const ca = fs.readFileSync(cert)
const BIG = 32 * 1024 * 1024
const root = makeRoot({ 'big.bin': Buffer.alloc(BIG, 'b'), 'a.txt': 'a'.repeat(1000), 'b.txt': 'b'.repeat(2000), 'reset.bin': Buffer.alloc(256 * 1024, 'r') })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const TLS = ['--ssl-cert', cert, '--ssl-key', key]
const portOf = (url) => Number(new URL(url).port)

describe.each([['HTTPS', TLS], ['HTTP/2 (its HTTP/1.1)', ['--http2', ...TLS]]])('zcopy serve %s', (name, args) => {
  test('pipelined requests as separate TLS records while a 32 MiB response is unread: all whole, no 400', async () => {
    const server = await startServe(root, ['--quiet', ...args])
    try {
      for (const sameTcpWrite of [true, true, false]) {
        const { responses, cut } = await pipelinedTrap(portOf(server.url), ca, { big: '/big.bin', small: ['/a.txt', '/b.txt'], sameTcpWrite })
        expect(cut).toBe(false)
        expect(responses).toEqual([{ status: 200, length: BIG }, { status: 200, length: 1000 }, { status: 200, length: 2000 }])
      }
    } finally {
      await server.stop()
    }
  }, 60000)

  test('400 clients that reset while answered: every socket closed within the timeout', async () => {
    const server = await startServe(root, ['--quiet', '--timeout', '1', ...args])
    try {
      const pid = server.cli.child.pid
      const baseline = socketCount(pid)
      await resetTrap(portOf(server.url), ca, { path: '/reset.bin', count: 400 })
      expect(await settle(() => socketCount(pid), baseline, 5000)).toBe(baseline)
    } finally {
      await server.stop()
    }
  }, 60000)
})

async function closedWithin (socket, ms) {
  socket.on('error', () => {})
  const started = Date.now()
  const timer = setTimeout(() => socket.destroy(new Error('still open')), ms)
  await once(socket, 'close')
  clearTimeout(timer)
  return Date.now() - started
}

describe('zcopy serve --timeout', () => {
  test('a connection that never sends a byte is closed (plain, TLS before and after the handshake, HTTP/2)', async () => {
    const plain = await startServe(root, ['--quiet', '--timeout', '1'])
    const secure = await startServe(root, ['--quiet', '--timeout', '1', '--http2', ...TLS])
    try {
      const silent = [
        net.connect(portOf(plain.url), '127.0.0.1'),
        net.connect(portOf(secure.url), '127.0.0.1'), // no TLS handshake
        tls.connect({ port: portOf(secure.url), host: '127.0.0.1', ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] })
      ]
      const session = http2.connect(secure.url, { ca })
      session.on('error', () => {})
      const waits = [...silent.map((socket) => closedWithin(socket, 8000)), (async () => {
        const started = Date.now()
        await once(session, 'close')
        return Date.now() - started
      })()]
      for (const waited of await Promise.all(waits)) {
        expect(waited).toBeGreaterThanOrEqual(800)
        expect(waited).toBeLessThan(8000)
      }
    } finally {
      await Promise.all([plain.stop(), secure.stop()])
    }
  }, 30000)

  test('a download that moves outlives the timeout (sendfile re-arms it); one whose client reads nothing is cut', async () => {
    const server = await startServe(root, ['--quiet', '--timeout', '1'])
    try {
      const slow = net.connect(portOf(server.url), '127.0.0.1')
      slow.write('GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n')
      let received = 0
      slow.on('data', (chunk) => {
        received += chunk.length
        slow.pause()
        setTimeout(() => slow.resume(), 20)
      })
      const stalled = net.connect(portOf(server.url), '127.0.0.1')
      stalled.write('GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n')
      stalled.pause()
      await new Promise((resolve) => setTimeout(resolve, 3000))
      expect(slow.destroyed).toBe(false)
      expect(received).toBeGreaterThan(0)
      expect(received).toBeLessThan(BIG)
      slow.destroy()
      // The stalled one was closed by the server meanwhile: what it reads now
      // ends well before the body does.
      let stalledReceived = 0
      stalled.on('data', (chunk) => { stalledReceived += chunk.length })
      stalled.resume()
      await closedWithin(stalled, 10000)
      expect(stalledReceived).toBeLessThan(BIG)
    } finally {
      await server.stop()
    }
  }, 30000)

  test('--timeout 0: no limit; a bad value is a usage error', async () => {
    const server = await startServe(root, ['--quiet', '--timeout', '0'])
    try {
      const socket = net.connect(portOf(server.url), '127.0.0.1')
      socket.on('error', () => {})
      await once(socket, 'connect')
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(socket.destroyed).toBe(false)
      socket.destroy()
    } finally {
      await server.stop()
    }
    expectOneLineUsageError(await runCli(['serve', root, '--timeout', 'soon']), /^zcopy: --timeout must be a number of seconds/)
    expectOneLineUsageError(await runCli(['serve', root, '--timeout', '30d']), /^zcopy: --timeout must be at most 24 days/)
  })
})
