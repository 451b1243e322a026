// What users see of the native lane's answers (issue 64): the access log has a
// line for each answer the lane writes itself, the same line (but for the
// times) as Node's path writes for the same exchange, text and JSON, in order,
// at a graceful stop too, and with the bytes that went for a cut transfer; a
// head still arriving after --timeout gets Node's 408. Real `zcopy serve`
// children and loopback sockets; with ZCOPY_NATIVE=0 --native-lane turns
// itself off, and the comparisons hold as well (both sides are Node's).
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { runCli, waitForStdout } from './cli.mjs'
import { exchange, makeRoot, portOf, startServe } from './serve-helpers.mjs'

const big = Buffer.alloc(300 * 1024, 'b') // above the memory cache's 64 KiB: sendfile on both paths
const other = Buffer.alloc(200 * 1024, 'o')
// More than loopback's socket buffers hold: a client that stops reading stops the transfer.
const huge = Buffer.alloc(16 * 1024 * 1024, 'h')
const root = makeRoot({ 'big.bin': big, 'other.bin': other, 'huge.bin': huge, 'a.txt': 'alpha\n' })
const ARGS = ['--no-compress']
const servers = {}
beforeAll(async () => {
  const started = await Promise.all([
    startServe(root, ['--native-lane', ...ARGS]),
    startServe(root, ['--no-native-lane', ...ARGS]),
    startServe(root, ['--native-lane', '--log', 'json', ...ARGS]),
    startServe(root, ['--no-native-lane', '--log', 'json', ...ARGS])
  ])
  Object.assign(servers, { laneText: started[0], plainText: started[1], laneJson: started[2], plainJson: started[3] })
})
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

// Resolves once `server` logged a request sent now: every line of what came
// before it is written. → where its stdout ends then.
async function logged (server) {
  const marker = `/marker-${Math.random().toString(36).slice(2)}`
  await exchange(server, [`GET ${marker} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`])
  while (!server.cli.stdout().includes(marker)) await sleep(20)
  return server.cli.stdout().length
}

// The access log lines `server` writes for what `act()` does.
async function linesOf (server, act) {
  const from = await logged(server)
  await act()
  const to = await logged(server)
  return server.cli.stdout().slice(from, to).split('\n').filter((line) => line !== '' && !line.includes('/marker-'))
}

const textWithoutTimes = (line) => line.replace(/ \d+\.\d ms /, ' - ms ')

function jsonWithoutTimes (line) {
  const entry = JSON.parse(line)
  expect(new Date(entry.time).toISOString()).toBe(entry.time)
  expect(typeof entry.ms).toBe('number')
  return JSON.stringify({ ...entry, time: '-', ms: '-' })
}

const GET = (path, close = false) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${close ? 'Connection: close\r\n' : ''}\r\n`
const HEAD = (path) => `HEAD ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`

// Hits (once the lane has learned them), a miss, then a hit Node answers.
const EXCHANGE = GET('/big.bin') + HEAD('/a.txt') + GET('/other.bin') + HEAD('/big.bin') + GET('/big.bin') +
  GET('/nope') + GET('/big.bin', true)

describe('zcopy serve --native-lane: the access log', () => {
  for (const [format, lane, plain, withoutTimes] of [
    ['text', 'laneText', 'plainText', textWithoutTimes],
    ['JSON', 'laneJson', 'plainJson', jsonWithoutTimes]
  ]) {
    test(`${format}: the lines of the lane's answers are Node's, in order`, async () => {
      await Promise.all([exchange(servers[lane], [EXCHANGE]), exchange(servers[plain], [EXCHANGE])]) // the lane learns
      const [withLane, without] = await Promise.all([lane, plain].map((name) => linesOf(servers[name], () => exchange(servers[name], [EXCHANGE]))))
      expect(without.length).toBe(7)
      expect(withLane.map(withoutTimes)).toEqual(without.map(withoutTimes))
    })
  }

  test('30 pipelined hits: 30 lines, in order, Node\'s', async () => {
    const burst = (GET('/big.bin') + HEAD('/a.txt') + GET('/other.bin')).repeat(10) + GET('/big.bin', true)
    const { laneText: lane, plainText: plain } = servers
    await Promise.all([exchange(lane, [burst]), exchange(plain, [burst])])
    const [withLane, without] = await Promise.all([lane, plain].map((server) => linesOf(server, () => exchange(server, [burst]))))
    expect(without.length).toBe(31)
    expect(without.slice(0, 3).map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual(['GET /big.bin', 'HEAD /a.txt', 'GET /other.bin'])
    expect(withLane.map(textWithoutTimes)).toEqual(without.map(textWithoutTimes))
  })

  // The client reads a little of a body larger than the socket buffers, then
  // goes: the line says how many bytes went, at least those it read, and that
  // the transfer was cut. The lane's replay, and a request it lent (a target
  // it has no answer for), whose body it sends on alone once Node's response
  // ended: that line waits for the body's end.
  for (const [name, server, target] of [['text', 'laneText', '/huge.bin'], ['JSON', 'laneJson', '/huge.bin'], ['text, lent', 'laneText', '/huge.bin?lent'], ['JSON, lent', 'laneJson', '/huge.bin?lent']]) {
    test(`a cut transfer logs the bytes that went (${name})`, async () => {
      if (target === '/huge.bin') await exchange(servers[server], [GET(target, true)])
      const lines = await linesOf(servers[server], async () => {
        const from = servers[server].cli.stdout().length
        const socket = net.connect(portOf(servers[server]), '127.0.0.1')
        await once(socket, 'connect')
        socket.write(GET(target))
        let received = 0
        for await (const chunk of socket) {
          received += chunk.length
          if (received > 256 * 1024) break // destroys the socket
        }
        // Until the server noticed: its line is written then.
        for (let i = 0; i < 400 && !servers[server].cli.stdout().slice(from).includes('huge.bin'); i++) await sleep(25)
      })
      expect(lines.length).toBe(1)
      const entry = name.startsWith('text')
        ? (() => {
            const [, path, bytes, ended] = lines[0].match(/^GET (\S+) 200 (\d+) B \d+\.\d ms (?:zero-copy|stream)( aborted)$/)
            expect(path).toBe(target)
            return { bytes: Number(bytes), ended }
          })()
        : JSON.parse(lines[0])
      if (name.startsWith('JSON')) expect(entry).toMatchObject({ method: 'GET', path: target, status: 200, zeroCopy: native !== null, aborted: true, ended: 'aborted' })
      expect(entry.bytes).toBeGreaterThan(256 * 1024 - 1024) // the body bytes the client read, less the head
      expect(entry.bytes).toBeLessThan(huge.length)
    }, 30_000)
  }

  test.runIf(native !== null)('a graceful stop: the lines of the answers before it and of one it let finish', async () => {
    const server = await startServe(root, ['--native-lane', ...ARGS])
    try {
      await exchange(server, [GET('/huge.bin', true)]) // Node answers, the lane learns
      await exchange(server, [GET('/a.txt', true)])
      const download = net.connect(portOf(server), '127.0.0.1')
      await once(download, 'connect')
      download.write(GET('/huge.bin'))
      let received = (await once(download, 'data'))[0].length // the lane writes the answer
      download.pause() // and waits for room
      const hit = await exchange(server, [GET('/a.txt', true)])
      expect(hit.toString()).toMatch(/\r\n\r\nalpha\n$/)
      server.cli.child.kill('SIGTERM')
      // Read on once the stop has counted the answer in flight: read at once,
      // the rest of it may go before the signal's turn comes.
      await waitForStdout(server.cli, /^zcopy: stopping/m)
      download.on('data', (chunk) => { received += chunk.length })
      download.resume()
      await once(download, 'close')
      expect(received).toBeGreaterThan(huge.length)
      const { code, stdout } = await server.cli.output()
      expect(code).toBe(0)
      expect(stdout).toMatch(/^zcopy: stopping; waiting up to 10 s for 1 response in flight /m)
      const lines = stdout.split('\n').filter((line) => /^GET \//.test(line)).map(textWithoutTimes)
      // The first two are Node's, to requests the lane lent it (lib/lane/twin.js:
      // their bodies go by the lane's sendfile, zero-copy too).
      expect(lines).toEqual([
        'GET /huge.bin 200 16777216 B - ms zero-copy',
        'GET /a.txt 200 6 B - ms zero-copy',
        'GET /a.txt 200 6 B - ms zero-copy',
        'GET /huge.bin 200 16777216 B - ms zero-copy'
      ])
    } finally {
      server.cli.child.kill('SIGKILL')
    }
  }, 30_000)
})

// Starts a download of `path` on `server`, stops the server (SIGTERM) while
// the answer waits for room, and resolves with the last JSON log line.
async function cutByStop (server, path) {
  const download = net.connect(portOf(server), '127.0.0.1')
  download.on('error', () => {})
  await once(download, 'connect')
  download.write(GET(path))
  await once(download, 'data') // the answer is being written
  download.pause() // and waits for room until the stop cuts it
  server.cli.child.kill('SIGTERM')
  const { code, stdout } = await server.cli.output()
  download.destroy()
  expect(code).toBe(0)
  return stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).at(-1)
}

// A download still going when --shutdown-timeout ends is cut: its line says
// so, with the bytes that went, as Node's path says it.
test('a transfer cut by the stop: "cut at shutdown", as without the lane', async () => {
  const args = ['--shutdown-timeout', '0.3', '--log', 'json', ...ARGS]
  const [lane, plain] = await Promise.all([startServe(root, ['--native-lane', ...args]), startServe(root, ['--no-native-lane', ...args])])
  try {
    const entries = await Promise.all([lane, plain].map(async (server) => {
      await exchange(server, [GET('/huge.bin', true)]) // the lane learns
      return cutByStop(server, '/huge.bin')
    }))
    for (const entry of entries) {
      expect(entry).toMatchObject({ method: 'GET', path: '/huge.bin', status: 200, zeroCopy: native !== null, aborted: true, ended: 'shutdown' })
      expect(entry.bytes).toBeGreaterThan(0)
      expect(entry.bytes).toBeLessThan(huge.length)
    }
  } finally {
    lane.cli.child.kill('SIGKILL')
    plain.cli.child.kill('SIGKILL')
  }
}, 30_000)

// The same for a request the lane lends (a target it has no answer for):
// Node's twin is destroyed by the stop while the lane sends the file for it,
// and the line says how much of it went.
test.runIf(native !== null)('a lent transfer cut by the stop: "cut at shutdown" with the bytes that went', async () => {
  const lane = await startServe(root, ['--native-lane', '--shutdown-timeout', '0.3', '--log', 'json', ...ARGS])
  try {
    const entry = await cutByStop(lane, '/huge.bin?lent')
    expect(entry).toMatchObject({ method: 'GET', status: 200, aborted: true, ended: 'shutdown' })
    expect(entry.bytes).toBeGreaterThan(0)
    expect(entry.bytes).toBeLessThan(huge.length)
  } finally {
    lane.cli.child.kill('SIGKILL')
  }
}, 30_000)

// Node's server answers a head still arriving after headersTimeout (--timeout)
// with a 408 and closes (it looks every 30 s: this test waits that long); a
// connection silent for --timeout is closed without a word.
describe('zcopy serve --native-lane: a head that takes too long', () => {
  // Sends a head's start, then (with `trickle`) a byte of a field every 200 ms:
  // → all it received once the server closed the connection.
  async function slowClient (server, trickle) {
    const socket = net.connect(portOf(server), '127.0.0.1')
    const received = []
    socket.on('data', (chunk) => received.push(chunk))
    socket.on('error', () => {}) // a reset: the server closed with our bytes unread, after its 408
    const closed = new Promise((resolve) => socket.once('close', resolve)) // not once(): an 'error' would reject it
    await once(socket, 'connect')
    socket.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')
    const timer = trickle ? setInterval(() => socket.write('z'), 200) : null
    await closed
    clearInterval(timer)
    return Buffer.concat(received).toString('latin1')
  }

  test('the same 408 as Node\'s for a client still sending its head; nothing for a silent one', async () => {
    const args = ['--timeout', '1', '--quiet', ...ARGS]
    const [lane, plain] = await Promise.all([startServe(root, ['--native-lane', ...args]), startServe(root, ['--no-native-lane', ...args])])
    try {
      const [laneSlow, plainSlow, laneSilent, plainSilent] = await Promise.all([
        slowClient(lane, true), slowClient(plain, true), slowClient(lane, false), slowClient(plain, false)
      ])
      expect(plainSlow).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n')
      expect(laneSlow).toBe(plainSlow)
      expect(plainSilent).toBe('')
      expect(laneSilent).toBe('')
    } finally {
      await Promise.all([lane.stop(), plain.stop()])
    }
  }, 90_000)
})

// `zcopy doctor` says whether the lane can run here, and if not why: what
// zcopy serve --native-lane itself says (lane-refusal.js).
describe('zcopy doctor: the native lane', () => {
  test('a line, and nativeLane in --json; off without the addon', async () => {
    const [text, json, without] = await Promise.all([
      runCli(['doctor']), runCli(['doctor', '--json']), runCli(['doctor'], { env: { ZCOPY_NATIVE: '0' } })
    ])
    const off = /^ {2}native lane +✗ cannot run here: the native addon is not loaded$/m
    expect(text.stdout).toMatch(native === null ? off : /^ {2}native lane +✓ on in zcopy serve over plain HTTP \(--no-native-lane: off\)$/m)
    expect(JSON.parse(json.stdout).nativeLane).toEqual(native === null
      ? { available: false, refusal: 'the native addon is not loaded' }
      : { available: true, refusal: null })
    expect(without.stdout).toMatch(off)
  }, 30_000)
})

// A request the lane lends to Node, whose file body the lane then sends by
// sendfile: a client that goes once part of the body came is logged with the
// bytes that went, not 0 (the lane closed the connection in the middle of
// sendFile(), and its answer said nothing of how far it got).
test.runIf(native !== null)('lent downloads cut by their clients: each line has the bytes that went', async () => {
  const server = await startServe(root, ['--native-lane', '--log', 'json', ...ARGS])
  try {
    const ROUNDS = 12
    for (let i = 0; i < ROUNDS; i++) {
      const socket = net.connect(portOf(server), '127.0.0.1')
      socket.on('error', () => {})
      await once(socket, 'connect')
      socket.write(`GET /huge.bin?cut=${i} HTTP/1.1\r\nHost: localhost\r\n\r\n`) // a target of its own: lent
      let received = 0
      while (received < 64 * 1024) received += (await once(socket, 'data'))[0].length // some of the body too
      socket.resetAndDestroy()
      await waitForStdout(server.cli, new RegExp(`"path":"/huge\\.bin\\?cut=${i}"`))
    }
    const lines = server.cli.stdout().split('\n').filter((line) => line.includes('?cut=')).map((line) => JSON.parse(line))
    expect(lines).toHaveLength(ROUNDS)
    for (const line of lines) {
      expect(line, line.path).toMatchObject({ status: 200, zeroCopy: true, aborted: true })
      expect(line.bytes, line.path).toBeGreaterThan(0)
      expect(line.bytes, line.path).toBeLessThan(huge.length)
    }
  } finally {
    await server.stop()
  }
}, 60_000)
