// How the native lane sends its answers (issue 64), on real loopback
// connections:
// - The close after an answer lingers: it shuts its side, then reads and
//   drops what the client still sends until the client closes, as nginx's
//   lingering_close. Closing a socket with unread bytes sends a reset, and
//   the client's kernel drops whatever of the answer it had not read yet: a
//   16 MiB body would come cut, with ECONNRESET.
// - A long body keeps at most 256 KiB unsent behind what the client's window
//   lets out (TCP_NOTSENT_LOWAT, src/tuning.h's kUnsentLimit), as the
//   engine's transfers do (test/engine/unsent-limit.test.mjs). Without it the
//   kernel queues megabytes per connection there, and a loopback client's
//   ACKs spend its CPU transmitting them: at 1 MiB and 256 connections the
//   lane answered 3,456 requests a second where Node's path answered 4,011.
//   Read with ss(8) on a client that stops reading.
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { settledNotSent, ssInstalled } from '../support/net.mjs'
import { descriptorsOf, get, makeRoot, portOf, startServe } from './serve-helpers.mjs'

const KiB = 1024
const LIMIT = 256 * KiB
const SLACK = 64 * KiB // tcp_sendmsg checks the limit before each segment of up to 64 KiB
const systemLimit = Number(fs.readFileSync('/proc/sys/net/ipv4/tcp_notsent_lowat', 'utf8'))

const huge = Buffer.alloc(16 * 1024 * 1024, 'h')
const root = makeRoot({ 'huge.bin': huge, 'a.txt': 'alpha\n' })
let lane
beforeAll(async () => {
  if (native !== null) lane = await startServe(root, ['--no-compress', '--quiet'])
})
afterAll(async () => {
  if (lane) await lane.stop()
  fs.rmSync(root, { recursive: true, force: true })
})

// GETs `path` until the lane has a row for it (Node answers the first
// request and the lane learns the answer), proven by the row's own descriptor.
async function laneRowFor (path) {
  const file = `${root}${path}`
  for (let i = 0; i < 100 && descriptorsOf(lane, file) < 2; i++) {
    await get(lane, path)
    await sleep(20)
  }
  expect(descriptorsOf(lane, file)).toBeGreaterThanOrEqual(2)
}

// A connection that reads nothing until `resume()` and ends its side at the
// lane's end unless `halfOpen`; → { socket, received(), ended: Promise of
// the error or null at its close }.
async function unreadConnection ({ halfOpen = false } = {}) {
  const socket = net.connect({ port: portOf(lane), host: '127.0.0.1', allowHalfOpen: true })
  const chunks = []
  let length = 0
  socket.on('data', (chunk) => { chunks.push(chunk); length += chunk.length })
  socket.pause()
  if (!halfOpen) socket.on('end', () => socket.end())
  let error = null
  socket.on('error', (err) => { error = err })
  const ended = new Promise((resolve) => socket.on('close', () => resolve(error)))
  await once(socket, 'connect')
  return { socket, received: () => Buffer.concat(chunks, length), ended }
}

describe.runIf(native !== null)('zcopy serve --native-lane: the close after an answer lingers', () => {
  beforeAll(() => laneRowFor('/huge.bin'))

  test('a client that sent more behind a Connection: close request gets the whole answer, then the end', async () => {
    for (let round = 0; round < 3; round++) {
      const client = await unreadConnection()
      client.socket.write('GET /huge.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
      await sleep(200) // the lane fills the socket's buffers and waits for room
      client.socket.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(10)) // bytes it will never answer
      await sleep(50)
      client.socket.resume()
      const error = await client.ended
      const bytes = client.received()
      expect(error).toBe(null)
      const head = bytes.subarray(0, bytes.indexOf('\r\n\r\n') + 4).toString('latin1')
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Length: 16777216\r\n[^]*Connection: close\r\n/)
      expect(bytes.length - head.length).toBe(huge.length)
      expect(bytes.subarray(head.length).equals(huge)).toBe(true)
    }
  })

  test('a client that never closes is let go once it sent nothing for 5 s', async () => {
    const client = await unreadConnection({ halfOpen: true })
    client.socket.resume()
    client.socket.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    await once(client.socket, 'end') // the lane shut its side after the answer
    expect(client.received().toString('latin1')).toMatch(/\r\n\r\nalpha\n$/)
    // What the client sends now is read and dropped (a closed socket would
    // answer it with a reset, which the second write meets)…
    await sleep(1500)
    expect(await writeTwice(client.socket)).toBe(false)
    // …until 5 s without a byte (lingering_timeout; the lane's sweep runs once
    // a second): then the lane closes it, and the writes get the reset.
    await sleep(8000)
    expect(await writeTwice(client.socket)).toBe(true)
    expect((await client.ended)?.code).toMatch(/^(EPIPE|ECONNRESET)$/)
  }, 60_000)
})

// Two writes 300 ms apart: → whether the socket was reset (the first write to
// a closed peer brings the reset back, the second fails on it).
async function writeTwice (socket) {
  for (let i = 0; i < 2 && !socket.destroyed; i++) {
    socket.write('more', () => {})
    await sleep(300)
  }
  return socket.destroyed
}

// GET `path` on a new connection that reads nothing until the unsent bytes
// settled; → those bytes, and whether the whole body came once it read.
async function unsentFor (path) {
  const socket = net.connect({ port: portOf(lane), host: '127.0.0.1' })
  await once(socket, 'connect')
  socket.pause()
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  await sleep(100)
  const unsent = await settledNotSent(portOf(lane), socket.localPort)
  let length = 0
  socket.on('data', (chunk) => { length += chunk.length })
  socket.resume()
  await once(socket, 'close')
  return { unsent, whole: length > huge.length }
}

describe.runIf(native !== null && ssInstalled && systemLimit > LIMIT)('zcopy serve --native-lane: TCP_NOTSENT_LOWAT', () => {
  test('a replayed 16 MiB answer leaves at most 256 KiB unsent', async () => {
    await laneRowFor('/huge.bin')
    const { unsent, whole } = await unsentFor('/huge.bin')
    expect(unsent).toBeGreaterThan(0)
    expect(unsent).toBeLessThanOrEqual(LIMIT + SLACK)
    expect(whole).toBe(true)
  })

  test('a lent one (Node answers, the lane sends its file) too', async () => {
    const { unsent, whole } = await unsentFor('/huge.bin?first') // a miss: no row for this target
    expect(unsent).toBeGreaterThan(0)
    expect(unsent).toBeLessThanOrEqual(LIMIT + SLACK)
    expect(whole).toBe(true)
  })
})
