// zcopy serve --native-lane lends a request it parsed whole but cannot answer
// (a miss, a 404, a listing, a conditional request) to Node's server
// alone, through a twin socket (lib/lane/twin.js), writes Node's
// answer itself and then reads the connection's next request: a keep-alive
// connection that misses once stays with the lane. Real sockets, real
// `zcopy serve` child processes and, for where an answer came from, a lane
// driven in this process with a real node:http server and serveStatic. With
// ZCOPY_NATIVE=0 (no addon) --native-lane is off: the exchanges still compare
// it with a server without the flag, and what needs the lane is skipped.
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { exchange, portOf, withoutDate } from '../support/raw-exchange.mjs'

const require = createRequire(import.meta.url)
const { nativeLane: createLane } = require('../../lib/lane/index.js')
const { serveStatic } = require('../../lib/http')

const huge = Buffer.alloc(16 * 1024 * 1024, 'h')
const mib = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7 + (i >> 10)) & 0xff))
const root = makeRoot({
  'a.txt': 'alpha\n',
  'b.txt': 'bravo\n',
  'huge-slow.bin': huge,
  'huge-gone.bin': huge,
  'mib.bin': mib,
  'mib-gone.bin': huge,
  'shrinks.bin': huge,
  'docs/readme.txt': 'docs\n'
})
const ARGS = ['--no-compress', '--listing', '--quiet']
let lane
let plain
beforeAll(async () => {
  [lane, plain] = await Promise.all([startServe(root, ['--native-lane', ...ARGS]), startServe(root, ['--no-native-lane', ...ARGS])])
})
afterAll(async () => {
  await Promise.all([lane, plain].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

const GET = (path, extra = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`

// A keep-alive connection to talk on: ask(request, until) → the bytes received
// from when the request was written until `until` (a string) ends them.
async function connection (port) {
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1').on('data', (chunk) => { received += chunk })
  await once(socket, 'connect')
  return {
    socket,
    async ask (request, until) {
      const before = received.length
      socket.write(request)
      while (!received.slice(before).endsWith(until)) await once(socket, 'data')
      return received.slice(before)
    }
  }
}

const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length
const rssOf = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]) * 1024

// Misses and hits mixed on one connection; the answers in order.
const CASES = {
  'a 404, then a hit, then a listing, then a hit': [
    GET('/a.txt') + GET('/nope') + GET('/a.txt') + GET('/docs/') + GET('/b.txt', 'Connection: close\r\n')
  ],
  'HEAD misses between hits': [
    GET('/a.txt') + 'HEAD /nope HTTP/1.1\r\nHost: localhost\r\n\r\n' + 'HEAD /docs/ HTTP/1.1\r\nHost: localhost\r\n\r\n' +
    GET('/a.txt', 'Connection: close\r\n')
  ],
  'a range (lent), a condition, then a hit': [
    GET('/a.txt', 'Range: bytes=1-2\r\n') + GET('/a.txt', 'If-None-Match: "nothing"\r\n') + GET('/a.txt', 'Connection: close\r\n')
  ],
  'Connection: close on a miss: closed after its answer': [GET('/nope', 'Connection: close\r\n') + GET('/a.txt')],
  'a hit, then a last miss with Connection: close': [GET('/a.txt') + GET('/docs/', 'Connection: close\r\n')],
  'HTTP/1.0 miss: closed after its answer': ['GET /nope HTTP/1.0\r\n\r\n' + GET('/a.txt')],
  'HTTP/1.0 keep-alive miss, then a hit': ['GET /nope HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' + 'GET /a.txt HTTP/1.0\r\n\r\n'],
  'a miss, then a POST (handed off for good), then a GET': [
    GET('/nope') + 'POST /a.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi' + GET('/a.txt', 'Connection: close\r\n')
  ]
}

describe('zcopy serve --native-lane: a request lent to Node', () => {
  for (const [name, chunks] of Object.entries(CASES)) {
    test(`${name}: the same bytes as without the lane, but for Date`, async () => {
      await exchange(portOf(lane), [GET('/a.txt', 'Connection: close\r\n') + GET('/b.txt', 'Connection: close\r\n')]) // rows for the hits
      await exchange(portOf(lane), [GET('/b.txt', 'Connection: close\r\n')])
      const [withLane, without] = await Promise.all([lane, plain].map(async (server) => (await exchange(portOf(server), chunks)).bytes))
      expect(without.length).toBeGreaterThan(0)
      expect(withoutDate(withLane)).toBe(withoutDate(without))
    })
  }

  test('a client that closes in the middle of a lent answer: the server carries on, no descriptor left', async () => {
    const pid = lane.cli.child.pid
    // The file's descriptor, which the open-file cache keeps, opened before.
    await exchange(portOf(lane), ['HEAD /huge-gone.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'])
    const before = fdCount(pid)
    for (let i = 0; i < 3; i++) {
      const socket = net.connect(portOf(lane), '127.0.0.1')
      await once(socket, 'connect')
      // A condition that does not match: a whole 200 from Node each time
      // (lent), which with Cache-Control is not offered to the lane (its row
      // would hold a descriptor of the file, rightly).
      socket.write(GET('/huge-gone.bin', `If-None-Match: "no-${i}"\r\nCache-Control: no-cache\r\n`))
      await once(socket, 'data')
      socket.destroy()
    }
    const answer = (await exchange(portOf(lane), [GET('/nope') + GET('/a.txt', 'Connection: close\r\n')])).bytes
    expect(answer.toString('latin1')).toMatch(/^HTTP\/1\.1 404 [^]*HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nalpha\n$/)
    for (let i = 0; i < 200 && fdCount(pid) > before; i++) await sleep(50)
    expect(fdCount(pid)).toBeLessThanOrEqual(before)
  })

  test('no descriptor is left behind by connections with lent requests', async () => {
    const pid = lane.cli.child.pid
    await exchange(portOf(lane), [GET('/a.txt', 'Connection: close\r\n')])
    const before = fdCount(pid)
    const request = GET('/nope') + GET('/a.txt') + GET('/docs/') + 'HEAD /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    await Promise.all(Array.from({ length: 20 }, (_, i) => exchange(portOf(lane), [i % 2 ? request : GET('/nope') + 'GET /a.txt HTTP/1.1\r\n'], { end: true })))
    for (let i = 0; i < 200 && fdCount(pid) > before; i++) await sleep(50)
    expect(fdCount(pid)).toBeLessThanOrEqual(before)
  })

  describe.runIf(native !== null)('with the addon', () => {
    // Node's server alone would close the connection past 32 waiting
    // requests (lib/http/delivery/one-at-a-time.js); the lane lends one at a
    // time and reads no further meanwhile.
    test('500 pipelined requests, misses and hits, in one write: every answer, in order', async () => {
      await exchange(portOf(lane), [GET('/a.txt', 'Connection: close\r\n')])
      let burst = ''
      for (let i = 0; i < 250; i++) burst += GET(`/nope-${i}`) + GET('/a.txt')
      const bytes = (await exchange(portOf(lane), [burst + GET('/b.txt', 'Connection: close\r\n')])).bytes
      const answers = bytes.toString('latin1').split(/(?=HTTP\/1\.1 )/)
      expect(answers.length).toBe(501)
      for (let i = 0; i < 500; i++) {
        expect(answers[i], `answer ${i}`).toMatch(i % 2 ? /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nalpha\n$/ : /^HTTP\/1\.1 404 /)
      }
      expect(answers[500]).toMatch(/Connection: close\r\n\r\nbravo\n$/)
    })

    test('a lent 16 MiB answer to a client that reads slowly: all of it, and the server does not hold it', async () => {
      const pid = lane.cli.child.pid
      const socket = net.connect(portOf(lane), '127.0.0.1')
      await once(socket, 'connect')
      const rssBefore = rssOf(pid)
      socket.write(GET('/huge-slow.bin', 'If-None-Match: "other"\r\nConnection: close\r\n'))
      socket.pause()
      await sleep(500)
      // What the kernel's buffers hold is out of the process; the process
      // holds a window of the body, not the 16 MiB.
      expect(rssOf(pid) - rssBefore).toBeLessThan(huge.length / 2)
      const chunks = []
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.resume()
      await once(socket, 'close')
      const bytes = Buffer.concat(chunks)
      const body = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4)
      expect(body.length).toBe(huge.length)
      expect(body.equals(huge)).toBe(true)
    })
  })
})

// Where the answers come from: a lane in this process with a real node:http
// server whose handler counts the requests it sees. `special(req, res)`
// answers some paths itself (→ true); the rest go to serveStatic, or a 404.
async function laneInProcess (special = () => false, { timeoutMs = 0, onSent } = {}) {
  let lane = null
  const serve = serveStatic(root, { onReplayable: (req, res, replay) => lane.offer(req, res, replay), onSent })
  const seen = { count: 0 }
  const server = http.createServer((req, res) => {
    seen.count++
    if (special(req, res)) return
    serve(req, res, () => {
      res.statusCode = 404
      res.end('not here\n')
    })
  })
  server.timeout = timeoutMs // the lane's idle timeout (lib/lane reads it)
  lane = createLane(server)
  const { port } = await lane.listen(0, '127.0.0.1')
  return {
    port,
    seen,
    async stop () {
      await lane.close(1000)
      await serve.close()
    }
  }
}

describe.runIf(native !== null)('a lane in this process', () => {
  // As Node's server.close(): a client that connects once the stop began is
  // refused, not queued on a listener about to close and then reset.
  test('a stop refuses new connections at once', async () => {
    const { port, stop } = await laneInProcess()
    const stopped = stop()
    const socket = net.connect(port, '127.0.0.1')
    const [err] = await once(socket, 'error')
    await stopped
    expect(err.code).toBe('ECONNREFUSED')
  })

  test('a 404 then hits on one keep-alive connection: Node sees the 404, not the hits', async () => {
    const { port, seen, stop } = await laneInProcess()
    try {
      const first = await connection(port)
      expect(await first.ask(GET('/a.txt'), 'alpha\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/) // Node answers, the lane learns it
      expect(seen.count).toBe(1)
      const other = await connection(port)
      expect(await other.ask(GET('/a.txt'), 'alpha\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
      expect(seen.count).toBe(1) // the lane answered
      expect(await other.ask(GET('/nope'), 'not here\n')).toMatch(/^HTTP\/1\.1 404 Not Found\r\n[^]*Connection: keep-alive\r\n/)
      expect(seen.count).toBe(2)
      for (let i = 0; i < 3; i++) {
        expect(await other.ask(GET('/a.txt'), 'alpha\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Connection: keep-alive\r\n/)
      }
      expect(seen.count).toBe(2) // the connection is the lane's again
      const head = await other.ask('HEAD /nope HTTP/1.1\r\nHost: localhost\r\n\r\n', '\r\n\r\n')
      expect(head).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/)
      expect(await other.ask(GET('/a.txt'), 'alpha\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
      expect(seen.count).toBe(3)
      first.socket.destroy()
      other.socket.destroy()
    } finally {
      await stop()
    }
  })

  test('a lent 1 MiB answer: its body by the lane\'s sendfile, byte-exact, and the requests behind it in order', async () => {
    const sent = []
    const { port, seen, stop } = await laneInProcess(undefined, { onSent: (res, report) => sent.push(report) })
    try {
      const answer = (await exchange(port, [GET('/mib.bin') + 'HEAD /mib.bin HTTP/1.1\r\nHost: localhost\r\n\r\n' +
        GET('/nope') + GET('/a.txt', 'Connection: close\r\n')])).bytes
      const text = answer.toString('latin1')
      const heads = text.match(/HTTP\/1\.1 \d{3}/g)
      expect(heads.slice(0, 4)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 404', 'HTTP/1.1 200'])
      const bodyStart = text.indexOf('\r\n\r\n') + 4
      expect(answer.subarray(bodyStart, bodyStart + mib.length).equals(mib)).toBe(true)
      expect(text.slice(bodyStart + mib.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Length: 1048576\r\n[^]*\r\n\r\nHTTP\/1\.1 404 [^]*\r\n\r\nalpha\n$/)
      expect(seen.count).toBeGreaterThanOrEqual(3)
      expect(sent[0]).toMatchObject({ bytes: mib.length, zeroCopy: true, complete: true })
    } finally {
      await stop()
    }
  })

  // The body is the lane's to finish once the connection is full: Node's
  // response ends then (onSent hears it, with `finished`), and `finished`
  // says the client left.
  test('a client that hangs up in the middle of a lent body sent by the lane: aborted, no descriptor left', async () => {
    const sent = []
    const { port, stop } = await laneInProcess(undefined, { onSent: (res, report) => sent.push({ report, res }) })
    try {
      await exchange(port, ['HEAD /mib-gone.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'])
      const before = fdCount(process.pid)
      const socket = net.connect(port, '127.0.0.1')
      await once(socket, 'connect')
      socket.write(GET('/mib-gone.bin', 'If-None-Match: "no"\r\nCache-Control: no-cache\r\n'))
      await once(socket, 'data')
      for (let i = 0; i < 200 && sent.length === 0; i++) await sleep(50)
      expect(sent).toHaveLength(1)
      const [{ report, res }] = sent
      expect(report).toMatchObject({ bytes: huge.length, zeroCopy: true, complete: true })
      // Node's response ends before the body does ('finish' a tick or two
      // after onSent, as the Node version has it).
      for (let i = 0; i < 100 && !res.writableFinished; i++) await sleep(20)
      expect(res.writableFinished).toBe(true)
      socket.destroy()
      const end = await report.finished
      expect(end.complete).toBe(false)
      expect(end.bytes).toBeLessThan(huge.length)
      for (let i = 0; i < 200 && fdCount(process.pid) > before; i++) await sleep(50)
      expect(fdCount(process.pid)).toBeLessThanOrEqual(before)
    } finally {
      await stop()
    }
  })

  // A write through another name (a hard link in a folder no watch sees)
  // shortens the file while the lane sends it for Node: the answer is cut,
  // and JavaScript hears the file ended (not that the client left), so its
  // open-file cache drops the entry at once: the next answer has the new
  // length, where the entry's fstat alone would wait up to a second.
  test('a lent file that ends before its range: the answer is cut, the next one has the new length', async () => {
    const { port, stop } = await laneInProcess()
    const elsewhere = fs.mkdtempSync(root + '-link-')
    try {
      fs.linkSync(root + '/shrinks.bin', elsewhere + '/shrinks.bin')
      const socket = net.connect(port, '127.0.0.1')
      await once(socket, 'connect')
      socket.pause() // the lane waits for room in the middle of the body
      const chunks = []
      socket.on('data', (chunk) => chunks.push(chunk))
      const closed = once(socket, 'close')
      socket.write(GET('/shrinks.bin'))
      await sleep(150)
      fs.truncateSync(elsewhere + '/shrinks.bin', 1024)
      socket.resume()
      await closed
      const bytes = Buffer.concat(chunks)
      expect(bytes.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Length: 16777216\r\n/)
      expect(bytes.length - bytes.indexOf('\r\n\r\n') - 4).toBeLessThan(huge.length)
      const next = (await exchange(port, [GET('/shrinks.bin', 'Connection: close\r\n')])).bytes
      expect(next.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Length: 1024\r\n/)
      expect(next.length - next.indexOf('\r\n\r\n') - 4).toBe(1024)
    } finally {
      await stop()
      fs.rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  test('a range request is lent: its 206 by the lane, and the connection stays the lane\'s', async () => {
    const { port, seen, stop } = await laneInProcess()
    try {
      const warm = await connection(port)
      await warm.ask(GET('/a.txt'), 'alpha\n') // the row
      const other = await connection(port)
      expect(await other.ask(GET('/a.txt', 'Range: bytes=1-3\r\n'), 'lph')).toMatch(/^HTTP\/1\.1 206 Partial Content\r\n/)
      expect(seen.count).toBe(2)
      expect(await other.ask(GET('/a.txt'), 'alpha\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
      expect(seen.count).toBe(2) // the lane answered the hit: the connection is still its own
      warm.socket.destroy()
      other.socket.destroy()
    } finally {
      await stop()
    }
  })

  test('the twin says who the peer is, as a net.Socket does (the access log\'s)', async () => {
    const { port, stop } = await laneInProcess((req, res) => {
      if (req.url !== '/peer') return false
      res.end(`${req.socket.remoteAddress} ${req.socket.remotePort} ${req.socket.remoteFamily}\n`)
      return true
    })
    try {
      const client = await connection(port)
      const answer = await client.ask(GET('/peer'), 'IPv4\n')
      expect(answer.split('\r\n\r\n')[1]).toBe(`127.0.0.1 ${client.socket.localPort} IPv4\n`)
      client.socket.destroy()
    } finally {
      await stop()
    }
  })

  test('a client that goes away while Node is still answering: Node hears that it closed', async () => {
    let closed = null
    const { port, stop } = await laneInProcess((req, res) => {
      if (req.url !== '/never') return false
      closed = once(res, 'close')
      return true
    })
    try {
      const bytes = (await exchange(port, [GET('/never')], { end: true })).bytes
      expect(bytes.length).toBe(0)
      await closed // the twin was destroyed: Node's server let go of the request
    } finally {
      await stop()
    }
  })

  test('Node destroying a lent answer midway cuts the connection; the requests behind it are not answered', async () => {
    const { port, seen, stop } = await laneInProcess((req, res) => {
      if (req.url !== '/cut') return false
      res.writeHead(200, { 'Content-Length': '100' })
      res.write('only part', () => res.destroy())
      return true
    })
    try {
      const bytes = (await exchange(port, [GET('/cut') + GET('/nope')])).bytes
      expect(bytes.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nonly part$/)
      expect(seen.count).toBe(1)
    } finally {
      await stop()
    }
  })

  test('a lent request Node never answers: the lane closes it after --timeout, and Node hears that it closed', async () => {
    let closed = null
    const { port, stop } = await laneInProcess((req, res) => {
      if (req.url !== '/never') return false
      closed = once(res, 'close')
      return true
    }, { timeoutMs: 1000 })
    try {
      const bytes = (await exchange(port, [GET('/never')])).bytes
      expect(bytes.length).toBe(0)
      await closed // the twin was destroyed: Node's server let go of the request
    } finally {
      await stop()
    }
  })
})
