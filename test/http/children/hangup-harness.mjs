// For the hang-up tests: a server under attack in a child process (see
// hangup-server.mjs), and clients that go away at the worst moments, over
// HTTP/1.1 (plain or TLS) and HTTP/2 (h2c or TLS).

import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tlsModule from 'node:tls'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'

export const FILES = {
  'one.bin': Buffer.from('x'),
  'mib.bin': randomBytes(1024 * 1024),
  'small.txt': Buffer.from('small file\n')
}

export const SECURE = new Set(['https', 'h2'])
export const HTTP2 = new Set(['h2c', 'h2'])
export const COMPRESSED = new Set(['compression', 'express'])

export async function makeRoot () {
  const root = await mkdtemp(join(tmpdir(), 'zcopy-hangup-'))
  for (const [name, bytes] of Object.entries(FILES)) await writeFile(join(root, name), bytes)
  return { root, cleanup: () => rm(root, { recursive: true, force: true }) }
}

const SERVER = fileURLToPath(new URL('./hangup-server.mjs', import.meta.url))

// → { kind, port, exited, alive(), fds(), close(), kill() }. `exited` resolves
// with { code, signal } if the child dies.
export async function startServer (kind, root) {
  const child = fork(SERVER, [kind, root], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  let status = null
  let killed = false
  const exited = once(child, 'exit').then(([code, signal]) => {
    status = { code, signal }
    if (!killed) console.error(`hangup-server (${kind}) died: ${JSON.stringify(status)}`)
    return status
  })
  const replies = []
  const waiting = []
  child.on('message', (message) => {
    const next = waiting.shift()
    if (next) next(message)
    else replies.push(message)
  })
  const reply = () => replies.length > 0
    ? Promise.resolve(replies.shift())
    : Promise.race([
      new Promise((resolve) => waiting.push(resolve)),
      exited.then((s) => { throw new Error(`server (${kind}) exited: ${JSON.stringify(s)}`) })
    ])
  const ask = (cmd) => { child.send({ cmd }); return reply() }
  const { port } = await reply()
  return {
    kind,
    port,
    exited,
    status: () => status,
    fds: async () => (await ask('fds')).fds,
    close: async () => (await ask('close')).closed,
    kill () {
      killed = true
      if (status === null) child.kill('SIGKILL')
      return exited
    }
  }
}

function connect (kind, port) {
  if (SECURE.has(kind)) return tlsModule.connect({ port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false })
  return net.connect(port, '127.0.0.1')
}

function connected (socket) {
  return once(socket, socket instanceof tlsModule.TLSSocket ? 'secureConnect' : 'connect')
}

function requestLine (path, kind, last = true) {
  const encoding = COMPRESSED.has(kind) ? 'Accept-Encoding: gzip\r\n' : ''
  return `GET /${path} HTTP/1.1\r\nHost: localhost\r\n${encoding}${last ? 'Connection: close\r\n' : ''}\r\n`
}

// Resolves on 'close', whatever error came first: a reset from the server while
// the client goes away is part of the attack, not a failure (events.once would
// reject on 'error'); the server's health is checked afterwards.
const closeOf = (emitter) => new Promise((resolve) => emitter.once('close', resolve))

// Ends `socket` abruptly: a TCP RST where there is one, else a plain destroy.
function cut (socket, reset) {
  if (reset && !(socket instanceof tlsModule.TLSSocket)) socket.resetAndDestroy()
  else socket.destroy()
}

// HTTP/1.1: sends `paths` pipelined on one connection, then goes away: `when` is
// 'at-once' (right after the request), 'tick' (after a tick), or a number of
// response bytes to read first. Resolves once the socket is closed.
export async function h1Cut (kind, port, paths, when, reset = false) {
  const socket = connect(kind, port)
  socket.on('error', () => {})
  const closed = closeOf(socket)
  try {
    await connected(socket)
  } catch {
    return closed
  }
  socket.write(paths.map((path, i) => requestLine(path, kind, i === paths.length - 1)).join(''))
  if (when === 'at-once') cut(socket, reset)
  else if (when === 'tick') setImmediate(() => cut(socket, reset))
  else {
    let received = 0
    socket.on('data', (chunk) => {
      received += chunk.length
      if (received >= when) cut(socket, reset)
    })
  }
  const timer = setTimeout(() => socket.destroy(), 5000)
  await closed
  clearTimeout(timer)
}

// HTTP/2: one session, `streams` requests of `path`; each stream is cancelled
// (RST_STREAM) at `when` ('at-once', 'response' or a number of bytes); with
// `session: true`, the whole connection is destroyed instead.
export async function h2Cut (kind, port, path, when, { streams = 1, session: cutSession = false } = {}) {
  const client = http2.connect(`${kind === 'h2' ? 'https' : 'http'}://localhost:${port}`, { rejectUnauthorized: false })
  client.on('error', () => {})
  const closed = closeOf(client)
  const timer = setTimeout(() => client.destroy(), 5000)
  try {
    await once(client, 'connect')
  } catch {
    return closed
  }
  const done = []
  for (let i = 0; i < streams && !client.destroyed; i++) {
    const stream = client.request({ ':path': '/' + path })
    stream.on('error', () => {})
    stream.resume() // a stream whose body nobody reads never closes
    done.push(once(stream, 'close').catch(() => {}))
    const go = () => cutSession ? client.destroy() : stream.close(http2.constants.NGHTTP2_CANCEL)
    if (when === 'at-once') go()
    else if (when === 'response') stream.once('response', go)
    else {
      let received = 0
      stream.on('data', (chunk) => {
        received += chunk.length
        if (received >= when) go()
      })
    }
    stream.end()
  }
  await Promise.all(done)
  client.close()
  await closed
  clearTimeout(timer)
}

// One complete download; → the body as served (gunzipped where compressed).
export async function download (kind, port, path) {
  if (HTTP2.has(kind)) {
    const client = http2.connect(`${kind === 'h2' ? 'https' : 'http'}://localhost:${port}`, { rejectUnauthorized: false })
    try {
      const stream = client.request({ ':path': '/' + path })
      stream.end()
      const chunks = []
      stream.on('data', (chunk) => chunks.push(chunk))
      const [headers] = await once(stream, 'response')
      await once(stream, 'end')
      return { status: headers[':status'], body: Buffer.concat(chunks) }
    } finally {
      client.close()
    }
  }
  const client = SECURE.has(kind) ? https : http
  const headers = COMPRESSED.has(kind) ? { 'accept-encoding': 'gzip' } : {}
  const res = await new Promise((resolve, reject) => {
    client.get({ host: '127.0.0.1', servername: 'localhost', port, path: '/' + path, headers, agent: false, rejectUnauthorized: false }, resolve).on('error', reject)
  })
  const chunks = []
  for await (const chunk of res) chunks.push(chunk)
  let body = Buffer.concat(chunks)
  if (res.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
  return { status: res.statusCode, body }
}

// Polls until the server's descriptor count is at most `baseline` (or the time is
// up; with no baseline: until it stops falling); → the last count.
export async function settledFds (server, baseline = 0, ms = 5000) {
  const until = Date.now() + ms
  let fds = await server.fds()
  let previous = Infinity
  while ((baseline ? fds > baseline : fds < previous) && Date.now() < until) {
    previous = fds
    await new Promise((resolve) => setTimeout(resolve, 50))
    fds = await server.fds()
  }
  return fds
}

export function randomCut (length) {
  return 1 + Math.floor(Math.random() * (length - 1))
}
