// zcopy serve's native lane (issue 64, on by default): the addon's lane owns the listening
// socket and hands Node's server every connection it does not answer itself.
// The same raw exchanges against a server with the lane and one without give
// the same bytes but for Date; with ZCOPY_NATIVE=0 (no addon) --native-lane is
// off, said in one line, and the server answers as without it.
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { exchange, get, loggedLines, makeRoot, portOf, startServe, withoutDate } from './serve-helpers.mjs'

const CERT = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const KEY = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const big = Buffer.alloc(300 * 1024, 'z')
// More than loopback's socket buffers hold: the lane's sendfile meets EAGAIN.
const huge = Buffer.alloc(16 * 1024 * 1024, 'h')
const root = makeRoot({
  'huge.bin': huge,
  'linked.txt': 'linked, first\n',
  'watched.txt': 'watched, first\n',
  'index.html': '<h1>home</h1>\n',
  'a.txt': 'alpha\n',
  'b.txt': 'bravo\n',
  'big.bin': big,
  'docs/readme.txt': 'docs\n',
  'empty/.keep': ''
})
const ARGS = ['--no-compress', '--listing', '--quiet']
let lane
let laneWithoutAddon
let plain
beforeAll(async () => {
  [lane, laneWithoutAddon, plain] = await Promise.all([
    startServe(root, ['--native-lane', ...ARGS.filter((arg) => arg !== '--quiet')]),
    startServe(root, ['--native-lane', ...ARGS], { env: { ZCOPY_NATIVE: '0' } }),
    startServe(root, ['--no-native-lane', ...ARGS])
  ])
})
afterAll(async () => {
  await Promise.all([lane, laneWithoutAddon, plain].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

// Each case: the chunks one connection writes; the server closes after the last.
const CASES = {
  'GET of a file, then Connection: close': ['GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
  HEAD: ['HEAD /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
  404: ['GET /nope.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
  'a listing': ['GET /docs/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
  'HTTP/1.0 (closes after the answer)': ['GET /b.txt HTTP/1.0\r\n\r\n'],
  'a large body': ['GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
  'pipelined requests, answered in order': [
    'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' +
    'HEAD /index.html HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
  ],
  'a POST with a body, then a GET': [
    'POST /a.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello' +
    'GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
  ],
  'a request that is no HTTP': ['NOT HTTP AT ALL\r\n\r\n'],
}

describe('zcopy serve --native-lane', () => {
  test('the start line says whether the lane is on', () => {
    if (native === null) {
      expect(lane.cli.stderr()).toMatch(/^zcopy: --native-lane off: the native addon is not loaded$/m)
      expect(lane.cli.stdout()).not.toMatch(/native lane/)
    } else {
      expect(lane.cli.stdout()).toMatch(/\(zero-copy on, native lane\)/)
      expect(lane.cli.stderr()).toBe('')
    }
    expect(laneWithoutAddon.cli.stderr()).toMatch(/^zcopy: --native-lane off: the native addon is not loaded$/m)
    expect(laneWithoutAddon.cli.stdout()).not.toMatch(/native lane/)
    expect(plain.cli.stdout()).not.toMatch(/native lane/)
  })

  // On by default where it can run; where it cannot, off without a word
  // unless it was asked for by name.
  test('on by default; off without a word where it cannot run, unless asked for', async () => {
    const tls = ['--ssl-cert', CERT, '--ssl-key', KEY]
    const servers = await Promise.all([
      startServe(root, ARGS),
      startServe(root, ARGS, { env: { ZCOPY_NATIVE: '0' } }),
      startServe(root, [...ARGS, ...tls]),
      startServe(root, [...ARGS, ...tls, '--native-lane'])
    ])
    try {
      const [byDefault, withoutAddon, overTls, askedOverTls] = servers
      if (native === null) expect(byDefault.cli.stdout()).not.toMatch(/native lane/)
      else expect(byDefault.cli.stdout()).toMatch(/\(zero-copy on, native lane\)/)
      for (const server of [byDefault, withoutAddon, overTls]) expect(server.cli.stderr()).toBe('')
      for (const server of [withoutAddon, overTls, askedOverTls]) expect(server.cli.stdout()).not.toMatch(/native lane/)
      expect(askedOverTls.cli.stderr()).toMatch(/^zcopy: --native-lane off: (TLS and HTTP\/2 stay on Node's stack|the native addon is not loaded)$/m)
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
    }
  })

  for (const [name, chunks] of Object.entries(CASES)) {
    test(`${name}: the same bytes as without the lane, but for Date`, async () => {
      const [withLane, withoutAddon, without] = await Promise.all([lane, laneWithoutAddon, plain].map((server) => exchange(server, chunks)))
      expect(without.length).toBeGreaterThan(0)
      expect(withoutDate(withLane)).toBe(withoutDate(without))
      expect(withoutDate(withoutAddon)).toBe(withoutDate(without))
    })
  }

  test('a partial head, then the end of the stream', async () => {
    const chunks = ['GET /a.txt HTTP/1.1\r\nHo']
    const [withLane, without] = await Promise.all([exchange(lane, chunks, { end: true }), exchange(plain, chunks, { end: true })])
    expect(withoutDate(withLane)).toBe(withoutDate(without))
  })

  test('a head split over many small writes', async () => {
    const raw = 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\nUser-Agent: slow\r\nConnection: close\r\n\r\n'
    const chunks = raw.match(/.{1,3}/gs)
    const [withLane, without] = await Promise.all([exchange(lane, chunks, { gapMs: 2 }), exchange(plain, chunks, { gapMs: 2 })])
    expect(withoutDate(withLane)).toBe(withoutDate(without))
    expect(withLane.toString()).toMatch(/\r\n\r\nalpha\n$/)
  })

  test('keep-alive: requests one after the other on one connection', async () => {
    const socket = net.connect(portOf(lane), '127.0.0.1')
    let received = ''
    socket.setEncoding('latin1').on('data', (chunk) => { received += chunk })
    await once(socket, 'connect')
    for (const [file, body] of [['a.txt', 'alpha\n'], ['b.txt', 'bravo\n'], ['a.txt', 'alpha\n']]) {
      const before = received.length
      socket.write(`GET /${file} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      while (!received.slice(before).endsWith(`\r\n\r\n${body}`)) await once(socket, 'data')
      expect(received.slice(before)).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Connection: keep-alive\r\n/)
    }
    socket.end()
    await once(socket, 'close')
  })

  test('no descriptor is left behind by the connections it served', async () => {
    const fdCount = () => fs.readdirSync(`/proc/${lane.cli.child.pid}/fd`).length
    const request = 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nGET /docs/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    await exchange(lane, [request]) // the first request of a file opens it in the cache
    const before = fdCount()
    await Promise.all(Array.from({ length: 20 }, (_, i) => exchange(lane, [i % 2 ? request : 'GET /a.txt HTTP/1.1\r\n'], { end: true })))
    // A socket Node closed is closed on a later turn of its loop: wait for it.
    // (Fewer is no leak: a socket of an earlier test may have been closing at `before`.)
    for (let i = 0; i < 200 && fdCount() > before; i++) await sleep(50)
    expect(fdCount()).toBeLessThanOrEqual(before)
  })

  describe.runIf(native !== null)('answers it replays', () => {
    const HITS = {
      'a GET': ['GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
      'a HEAD': ['HEAD /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
      'HTTP/1.0': ['GET /b.txt HTTP/1.0\r\n\r\n'],
      'HTTP/1.0 with keep-alive, then a close': ['GET /b.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b.txt HTTP/1.0\r\n\r\n'],
      'a body larger than a write': ['GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'],
      'pipelined, in order, then a miss': [
        'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' +
        'GET /b.txt HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n' +
        'GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
      ]
    }
    // Within the JS path's bound of 32 requests waiting on one connection.
    HITS['a burst of 30 pipelined hits in one write'] = [
      'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /b.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(15) +
      'GET /b.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    ]
    for (const [name, chunks] of Object.entries(HITS)) {
      test(`${name}: the same bytes as Node's, but for Date`, async () => {
        await exchange(lane, chunks) // Node answers, and the lane learns the answers
        const before = await loggedLines(lane, '/a.txt')
        const [withLane, without] = await Promise.all([exchange(lane, chunks), exchange(plain, chunks)])
        expect(withoutDate(withLane)).toBe(withoutDate(without))
        if (!name.startsWith('pipelined')) return
        // The lane answered the GET and HEAD before the miss and, once Node
        // answered the miss it lent, the last GET: a line each.
        expect((await loggedLines(lane, '/a.txt')).length).toBe(before.length + 3)
      })
    }

    // The JS path closes a connection with more than 32 requests waiting
    // (lib/http/delivery/one-at-a-time.js); the lane has none waiting: it
    // parses the next request only once an answer is written, and reads no
    // further while one waits for room, as nginx does.
    test('2,000 pipelined hits in one write: every answer, in order', async () => {
      const burst = 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /b.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
      await exchange(lane, [burst + 'GET /b.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'])
      const bytes = await exchange(lane, [burst.repeat(1000) + 'GET /b.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'])
      const answers = bytes.toString('latin1').split('HTTP/1.1 200 OK\r\n').slice(1)
      expect(answers.length).toBe(2001)
      for (let i = 0; i < 2000; i++) expect(answers[i].endsWith(i % 2 ? 'Keep-Alive: timeout=5\r\n\r\n' : '\r\n\r\nalpha\n'), `answer ${i}`).toBe(true)
      expect(answers[2000]).toMatch(/Connection: close\r\n\r\nbravo\n$/)
    })

    test('a client that reads slowly gets the whole body (sendfile waits for room)', async () => {
      await get(lane, '/huge.bin')
      const socket = net.connect(portOf(lane), '127.0.0.1')
      await once(socket, 'connect')
      socket.write('GET /huge.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
      socket.pause()
      await sleep(300)
      const chunks = []
      socket.on('data', (chunk) => chunks.push(chunk))
      socket.resume()
      await once(socket, 'close')
      const bytes = Buffer.concat(chunks)
      const body = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4)
      expect(body.length).toBe(huge.length)
      expect(body.equals(huge)).toBe(true)
    })

    test('a file rewritten by its own name: the next answers are the new bytes', async () => {
      expect((await get(lane, '/watched.txt')).body).toBe('watched, first\n')
      expect((await get(lane, '/watched.txt')).body).toBe('watched, first\n')
      fs.writeFileSync(`${root}/watched.txt`, 'watched, second version\n')
      let answer
      for (let i = 0; i < 200; i++) {
        answer = await get(lane, '/watched.txt')
        expect(answer.body.length).toBe(Number(answer.headers['content-length']))
        if (answer.body === 'watched, second version\n') break
        await sleep(25)
      }
      expect(answer.body).toBe('watched, second version\n')
      fs.rmSync(`${root}/watched.txt`)
      for (let i = 0; i < 200 && answer.status !== 404; i++) {
        answer = await get(lane, '/watched.txt')
        await sleep(25)
      }
      expect(answer.status).toBe(404)
    })

    test('a file rewritten in place through a hard link no watch sees: new bytes after the revalidation bound', async () => {
      const elsewhere = fs.mkdtempSync(`${root}-link-`)
      try {
        fs.linkSync(`${root}/linked.txt`, `${elsewhere}/other-name.txt`)
        expect((await get(lane, '/linked.txt')).body).toBe('linked, first\n')
        expect((await get(lane, '/linked.txt')).body).toBe('linked, first\n')
        fs.writeFileSync(`${elsewhere}/other-name.txt`, 'linked, rewritten longer\n') // same inode: O_TRUNC, write
        let answer
        for (let i = 0; i < 200; i++) {
          answer = await get(lane, '/linked.txt')
          // Never a length the bytes do not fill.
          expect(answer.body.length).toBe(Number(answer.headers['content-length']))
          if (answer.body === 'linked, rewritten longer\n') break
          await sleep(25)
        }
        expect(answer.body).toBe('linked, rewritten longer\n')
      } finally {
        fs.rmSync(elsewhere, { recursive: true, force: true })
      }
    })
    test('an idle keep-alive connection is closed after Node\'s keepAliveTimeout (5 s)', async () => {
      await get(lane, '/a.txt')
      const socket = net.connect(portOf(lane), '127.0.0.1')
      let received = ''
      socket.setEncoding('latin1').on('data', (chunk) => { received += chunk })
      await once(socket, 'connect')
      socket.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n')
      const started = Date.now()
      await once(socket, 'close')
      expect(received).toMatch(/Keep-Alive: timeout=5\r\n\r\nalpha\n$/)
      expect(Date.now() - started).toBeGreaterThanOrEqual(4000) // not at once: after the idle time
    }, 30_000)

    test('a stop lets the answer in flight finish and closes the idle connections', async () => {
      const server = await startServe(root, ['--native-lane', ...ARGS])
      try {
        await get(server, '/huge.bin')
        await get(server, '/a.txt')
        const idle = net.connect(portOf(server), '127.0.0.1')
        idle.on('data', () => {})
        await once(idle, 'connect')
        idle.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n')
        await once(idle, 'data')
        const download = net.connect(portOf(server), '127.0.0.1')
        await once(download, 'connect')
        download.write('GET /huge.bin HTTP/1.1\r\nHost: localhost\r\n\r\n')
        download.pause() // the lane's answer waits for room
        await sleep(200)
        const idleClosed = once(idle, 'close')
        server.cli.child.kill('SIGTERM')
        await idleClosed
        const chunks = []
        download.on('data', (chunk) => chunks.push(chunk))
        download.resume()
        await once(download, 'close')
        const bytes = Buffer.concat(chunks)
        expect(bytes.subarray(bytes.indexOf('\r\n\r\n') + 4).equals(huge)).toBe(true)
        const { code } = await server.cli.output()
        expect(code).toBe(0)
      } finally {
        server.cli.child.kill('SIGKILL')
      }
    }, 30_000)
  })
})
