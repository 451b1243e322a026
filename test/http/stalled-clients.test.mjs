// Clients that ask for a file over TLS or HTTP/2 and stop reading (issue 47):
// a real server in a child process (children/stalled-server.mjs), real clients
// over loopback that never read. What the server holds for them is counted
// (process.memoryUsage().arrayBuffers after full collections: the pieces read for
// them, and the bytes handed to Node and not yet written out) and bounded per
// client; its RSS is bounded too, generously; a client that reads, next to them,
// gets its file whole; and three waves of them, each gone before the next, do not
// creep up. The bounds leave room for a loaded machine: they hold figures, not
// timings. Before the piece pool (28620db: 256 KiB chunks read ahead per
// client) each stalled client held 254 KiB of Buffers; with the pool's first
// version (fa09e9e) 150 stalled TLS clients spent its whole budget, and the
// reading client waited forever.

import { fork } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http2 from 'node:http2'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { tls as certs } from '../support/http.mjs'
import { native } from '../../lib/engine/binding.js'

// Without the addon (ZCOPY_NATIVE=0) nothing hands the C heap's free pages
// back to the system (trimMemory): the RSS after the clients left is not bounded.
const trims = native !== null && typeof native.trimMemory === 'function'
const KiB = 1024
const MiB = 1024 * KiB
// Bigger than what the kernel's socket buffers take for a client on loopback,
// so that every stalled response backs up into the server.
const BIG = 24 * MiB
const WAVES = 3
const CASES = {
  // HTTP/1.1 over TLS: one request per connection.
  https: { connections: 150, streams: 1, paths: ['/big.bin'] },
  // HTTP/2: a few sessions, many streams each, half of them for a file small
  // enough to be answered from memory: all of its bytes handed to the stream at
  // once counted against the session's memory (10 MiB), and Node refused the
  // session's next streams (ENHANCE_YOUR_CALM).
  h2: { connections: 6, streams: 25, paths: ['/big.bin', '/medium.bin'] }
}
// Bytes held in Buffers per stalled request, over the idle server: the piece
// being written out (16 KiB) and Node's own, with room; 256 KiB chunks read
// ahead cost ≥ 256 KiB. Over HTTP/1.1 with the addon, which tells how much the
// kernel's send buffer takes (socketRoom), the write that waits for a client
// that stopped reading is no bigger than what fits, 1 KiB when nothing does:
// ~1 KiB per client once the piece pool let its spares go (2 s after the
// clients stalled), where a whole piece waiting held 16 KiB (issue 47;
// measured 2026-11-29: 0-1 KiB, 16-17 before).
const rooms = native !== null && typeof native.socketRoom === 'function'
const BUFFERS_PER_REQUEST = (kind) => kind === 'https' && rooms ? 8 * KiB : 64 * KiB
// RSS per stalled request: Node's TLS connection alone costs ~50 KiB, nginx's
// whole ~73 KiB; this bound leaves room for the allocator's slack (measured
// 90-400 KiB on 2026-11-29 across the Node lines in CI, 570-600 KiB before the
// piece pool; the Buffers bound above is what tells the two apart). Without the
// addon nothing hands the C heap's free pages back (trimMemory): what the
// clients' first megabytes went through stays in the RSS (250-825 KiB over
// TLS in CI's matrix, 2026-11-29, run to run on one line), so only a runaway
// is caught there.
const RSS_PER_REQUEST = (trims) => trims ? 512 * KiB : 1024 * KiB

let root, digest
// Every client connection made, so that a failed test leaves none open.
const opened = new Set()

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'zcopy-stalled-'))
  const body = randomBytes(BIG)
  digest = createHash('sha256').update(body).digest('hex')
  writeFileSync(join(root, 'big.bin'), body)
  writeFileSync(join(root, 'medium.bin'), randomBytes(900 * KiB))
})

afterAll(() => rmSync(root, { recursive: true, force: true }))

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function startServer (kind) {
  const child = fork(new URL('./children/stalled-server.mjs', import.meta.url), [kind, root], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const [ready] = await once(child, 'message')
  const ask = async (cmd) => {
    child.send({ cmd })
    const [reply] = await once(child, 'message')
    return reply
  }
  return {
    port: ready.port,
    memory: async () => (await ask('memory')).memory,
    async stop () {
      const exited = once(child, 'exit')
      // The server's close() waits for its connections; 10 s at most.
      await Promise.race([ask('close'), sleep(10_000)])
      child.kill()
      await exited
    }
  }
}

// A TLS connection that asks for `path` and never reads past the first bytes
// of the answer. → Promise of { socket, status } once the status line is in.
function stalledHttps (port, path) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certs.cert })
    opened.add(socket)
    socket.once('error', reject)
    socket.once('secureConnect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      // One look at the first bytes, then nothing is read any more: Node stops
      // reading from the kernel once its buffer is full, the kernel's fills.
      socket.once('readable', () => {
        const head = socket.read(16) ?? Buffer.alloc(0)
        resolve({ socket, status: Number(head.toString('latin1').split(' ')[1]) })
      })
    })
  })
}

// An HTTP/2 session with `streams` requests for `paths` in turn, none of them
// read. → Promise of { socket: the session, statuses }.
function stalledH2 (port, paths, streams) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://localhost:${port}`, { ca: certs.cert })
    opened.add(session)
    session.once('error', reject)
    const statuses = []
    for (let i = 0; i < streams; i++) {
      const stream = session.request({ ':path': paths[i % paths.length] })
      stream.pause()
      stream.once('error', reject)
      stream.once('response', (headers) => {
        statuses.push(headers[':status'])
        if (statuses.length === streams) resolve({ socket: session, statuses })
      })
    }
  })
}

async function openStalled (kind, port, { connections, streams, paths }) {
  const clients = []
  for (let i = 0; i < connections; i += 25) {
    const batch = []
    for (let j = i; j < Math.min(connections, i + 25); j++) {
      batch.push(kind === 'h2' ? stalledH2(port, paths, streams) : stalledHttps(port, paths[j % paths.length]))
    }
    clients.push(...await Promise.all(batch))
  }
  const statuses = clients.flatMap((client) => client.statuses ?? [client.status])
  expect(statuses).toEqual(Array(connections * streams).fill(200))
  return clients
}

async function closeAll (sockets) {
  await Promise.all(sockets.map((socket) => {
    opened.delete(socket)
    if (socket.destroyed) return undefined
    const closed = once(socket, 'close')
    socket.destroy()
    return closed
  }))
}

// The server's memory once what it holds stopped growing: measured until two
// readings a second apart are within 2 % (the clients' responses back up as
// the kernel's buffers fill), at most 20 s.
async function settled (server) {
  let last = await server.memory()
  for (let i = 0; i < 20; i++) {
    await sleep(1000)
    const now = await server.memory()
    if (Math.abs(now.arrayBuffers - last.arrayBuffers) <= last.arrayBuffers / 50 &&
      Math.abs(now.rss - last.rss) <= last.rss / 50) return now
    last = now
  }
  return last
}

// The server's memory with `requests` stalled, once settled and within the
// bounds per request, or what it is after 30 s.
async function steady (kind, server, idle, requests) {
  let now = await settled(server)
  for (let i = 0; i < 30; i++) {
    if (now.rss - idle.rss <= RSS_PER_REQUEST(trims) * requests &&
      now.arrayBuffers - idle.arrayBuffers <= BUFFERS_PER_REQUEST(kind) * requests) return now
    await sleep(1000)
    now = await server.memory()
  }
  return now
}

// The server's memory once it came back near `idle` (within a fifth, and
// 4 MiB), or what it is after 30 s: the C heap's free pages go back to the
// system once the piece pool saw a whole idle period (2 s) without a response.
async function cameBack (server, idle) {
  let now
  for (let i = 0; i < 30; i++) {
    now = await server.memory()
    if (now.rss <= idle.rss * 1.2 + 4 * MiB) return now
    await sleep(1000)
  }
  return now
}

// The whole of big.bin, read as fast as it comes. → its SHA-256. Rejects after
// 90 s (a reader starved by the stalled clients would wait forever).
function readWhole (kind, port) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the reading client did not get its file in 90 s')), 90_000)
    timer.unref()
    const hash = createHash('sha256')
    const onResponse = (res, status, done) => {
      res.on('data', (chunk) => hash.update(chunk))
      res.on('end', () => {
        clearTimeout(timer)
        done()
        resolve({ status, digest: hash.digest('hex') })
      })
      res.on('error', reject)
    }
    if (kind === 'h2') {
      const session = http2.connect(`https://localhost:${port}`, { ca: certs.cert })
      session.on('error', reject)
      const stream = session.request({ ':path': '/big.bin' })
      stream.on('response', (headers) => onResponse(stream, headers[':status'], () => session.close()))
      stream.on('error', reject)
    } else {
      https.get({ host: '127.0.0.1', port, path: '/big.bin', servername: 'localhost', ca: certs.cert, agent: false },
        (res) => onResponse(res, res.statusCode, () => {})).on('error', reject)
    }
  })
}

describe.each(Object.keys(CASES))('stalled %s clients', (kind) => {
  let server

  beforeAll(async () => {
    server = await startServer(kind)
  })

  afterAll(async () => {
    await closeAll([...opened])
    await server?.stop()
  })

  test('cost a bounded amount each, leave a reader its file, and do not creep over waves', async () => {
    const shape = CASES[kind]
    const requests = shape.connections * shape.streams
    // Warm up: the first TLS handshakes and responses allocate what stays.
    expect(await readWhole(kind, server.port)).toEqual({ status: 200, digest })
    // Once the piece pool let its spares go (after a whole idle period, 2 to 4
    // s after the last piece moved; 6 s leaves a loaded machine room): the
    // Buffers counted per stalled client are then theirs alone.
    await sleep(6000)
    const idle = await settled(server)
    const waves = []
    for (let wave = 0; wave < WAVES; wave++) {
      const clients = await openStalled(kind, server.port, shape)
      // Their steady state: the piece pool sees them all stalled (nothing taken
      // for a whole idle period, 2 s), lets its spares go and trims the C heap.
      const loaded = await steady(kind, server, idle, requests)
      // A client that reads, next to the stalled ones: its file, whole.
      expect(await readWhole(kind, server.port)).toEqual({ status: 200, digest })
      await closeAll(clients.map(({ socket }) => socket))
      // Read as idle was: once the pool let its spares go.
      await sleep(6000)
      waves.push({ loaded, after: trims ? await cameBack(server, idle) : await settled(server) })
    }
    const perRequest = (key, { loaded }) => (loaded[key] - idle[key]) / requests
    const figures = waves.map((wave) => ({
      buffersKiB: Math.round(perRequest('arrayBuffers', wave) / KiB),
      rssKiB: Math.round(perRequest('rss', wave) / KiB),
      afterMiB: Math.round(wave.after.rss / MiB)
    }))
    console.log(`stalled ${kind}: ${requests} requests; idle rss ${Math.round(idle.rss / MiB)} MiB; per wave`, figures)
    for (const wave of waves) {
      expect(perRequest('arrayBuffers', wave)).toBeLessThanOrEqual(BUFFERS_PER_REQUEST(kind))
      expect(perRequest('rss', wave)).toBeLessThanOrEqual(RSS_PER_REQUEST(trims))
    }
    // Three waves: the last one's peak bounded by the first's. Without the
    // addon the C heap is never trimmed, and the pieces the first megabytes of
    // each wave went through leave it fragmented (the RSS per request measured
    // 420-690 KiB over three waves on a loaded machine). With it, waves still
    // ratchet on some lines (Node 20.17.0 in CI, 2026-11-29: 98, 212, 278 KiB per
    // request; issue 47's goal of 1.1x is open): only a runaway fails here, the
    // bound per request above holds every wave.
    const first = waves[0].loaded.rss - idle.rss
    const last = waves[WAVES - 1].loaded.rss - idle.rss
    if (trims) expect(last).toBeLessThanOrEqual(first * 3 + 16 * MiB)
    // The stalled clients' buffers are let go once they left, wave after wave,
    // and with the addon the process comes back near its idle size.
    for (const { after } of waves) {
      expect(after.arrayBuffers - idle.arrayBuffers).toBeLessThanOrEqual(4 * MiB)
      // Issue 47 asks for 1.2x idle (bench/http/stalled.js), not met on every
      // line over TLS (CI, 2026-11-29: Node 22 108-113 MiB after 75 idle, Node
      // 24.21 99-116 after 78): here only memory kept for good fails.
      if (trims) expect(after.rss).toBeLessThanOrEqual(idle.rss * 1.75 + 8 * MiB)
    }
    expect(waves[WAVES - 1].after.fds).toBeLessThanOrEqual(idle.fds + 2)
  }, 240_000)
})
