// Bytes on every transport: plain keep-alive and pipelined HTTP/1.1 (zero-copy),
// TLS and compression middleware (stream fallback), HTTP/2 (through the compat
// response, never respondWithFD: see send-body.js), precompressed siblings.
// Clients that hang up on these transports: hang-up.test.mjs.

import { createHook } from 'node:async_hooks'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import { connect as connectTls } from 'node:tls'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import compression from 'compression'
import express from 'express'
import zcopy from '../../lib/index.js'
import { fdsUnder, listen, parseResponses, rawExchange, request, secureGet, tls } from '../support/http.mjs'
import { FILES, makeTree } from '../fixtures/http/tree.mjs'

let tree

beforeAll(async () => {
  tree = await makeTree()
})

afterAll(() => tree.cleanup())

function handlerFor (serve) {
  return (req, res) => serve(req, res, (err) => {
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  })
}

describe('plain HTTP/1.1', () => {
  let serve, app

  beforeAll(async () => {
    serve = zcopy.serveStatic(tree.root)
    app = await listen(handlerFor(serve))
  })

  afterAll(async () => {
    await app.close()
    await serve.close()
    expect(fdsUnder(tree.base)).toEqual([])
  })

  test('keep-alive: several requests on one connection, each with its bytes', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const order = ['hello.txt', 'big.bin', 'empty.txt', 'big.bin', 'ünïcødé ✓.txt', 'hello.txt']
      for (const [i, name] of order.entries()) {
        const answer = await request(app.port, '/' + encodeURIComponent(name), { agent })
        expect(answer.status).toBe(200)
        expect(answer.body.equals(Buffer.from(FILES[name]))).toBe(true)
        expect(answer.reused).toBe(i > 0)
      }
      const partial = await request(app.port, '/big.bin', { agent, headers: { range: 'bytes=100-1048675' } })
      expect(partial.status).toBe(206)
      expect(partial.body.equals(FILES['big.bin'].subarray(100, 1048676))).toBe(true)
      expect(partial.reused).toBe(true)
    } finally {
      agent.destroy()
    }
  })

  test('pipelining: responses come back in order, each body complete', async () => {
    const names = ['big.bin', 'hello.txt', 'big.bin', 'data.json', 'empty.txt', 'app.js']
    const raw = names.map((name, i) =>
      `GET /${name} HTTP/1.1\r\nHost: x\r\n${i === names.length - 1 ? 'Connection: close\r\n' : ''}\r\n`).join('')
    const responses = parseResponses(await rawExchange(app.port, raw))
    expect(responses.map((r) => r.status)).toEqual(names.map(() => 200))
    for (const [i, name] of names.entries()) {
      expect(responses[i].body.equals(Buffer.from(FILES[name]))).toBe(true)
    }
  })

  test('many concurrent downloads of the same file share one cached descriptor', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => request(app.port, '/big.bin')))
    for (const answer of answers) expect(answer.body.equals(FILES['big.bin'])).toBe(true)
    // the engine's private dup of it closes just after the last byte went out
    await expect.poll(() => fdsUnder(join(tree.root, 'big.bin')).length).toBe(1)
  })
})

test('TLS: the stream fallback sends the same bytes', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const app = await listen(null, https.createServer(tls, handlerFor(serve)))
  const agent = new https.Agent({ ca: tls.cert, keepAlive: true, maxSockets: 1 })
  const fetchTls = (path, headers = {}) => new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', servername: 'localhost', port: app.port, path, agent, headers }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
  try {
    expect((await fetchTls('/big.bin')).body.equals(FILES['big.bin'])).toBe(true)
    const partial = await fetchTls('/big.bin', { range: 'bytes=5-2000000' })
    expect(partial.status).toBe(206)
    expect(partial.body.equals(FILES['big.bin'].subarray(5, 2000001))).toBe(true)
    expect((await fetchTls('/hello.txt')).body.toString()).toBe(FILES['hello.txt'])
  } finally {
    agent.destroy()
    await app.close()
    await serve.close()
  }
})

// Over TLS the pieces go out one at a time, the next from the last one's write
// callback: one stall timer per response, re-armed, where there was one per
// piece; and each read is started from the callback of the last, with no
// promise per read (a crowd of clients grew V8's heap with them; issue 47).
// Counted, not timed: the timers and promises created in this process while a
// 3 MiB body goes out.
test('TLS: one stall timer and a few promises per response, none per piece or read', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const app = await listen(null, https.createServer(tls, handlerFor(serve)))
  const made = { Timeout: 0, PROMISE: 0 }
  const hook = createHook({ init (id, type) { if (type in made) made[type]++ } })
  try {
    expect((await secureGet(app.port, '/big.bin')).equals(FILES['big.bin'])).toBe(true) // opened and cached
    hook.enable()
    expect((await secureGet(app.port, '/big.bin')).equals(FILES['big.bin'])).toBe(true)
    hook.disable()
    // 192 pieces in 96 reads; the server's keep-alive timer and the pool's
    // sweep besides; the request's own promises (the middleware's, the
    // client's)
    expect(made.Timeout).toBeLessThan(16)
    expect(made.PROMISE).toBeLessThan(48)
  } finally {
    hook.disable()
    await app.close()
    await serve.close()
  }
})

// serveStatic in a node:https server, over a folder of one 32 MiB random file,
// big.bin: more than loopback's socket buffers take. → { file, server, port,
// close() }.
async function bigFileServer () {
  const dir = mkdtempSync(join(tmpdir(), 'zcopy-big-'))
  const file = randomBytes(32 * 1024 * 1024)
  writeFileSync(join(dir, 'big.bin'), file)
  const serve = zcopy.serveStatic(dir)
  const server = https.createServer(tls, handlerFor(serve))
  const app = await listen(null, server)
  return {
    file,
    server,
    port: app.port,
    async close () {
      await app.close()
      await serve.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

// The most bytes handed to `socket` (its bytesWritten) in one turn of the
// event loop, sampled every turn until the returned function is called.
function perTurn (socket) {
  let last = socket.bytesWritten
  let most = 0
  let sampling = true
  const sample = () => {
    most = Math.max(most, socket.bytesWritten - last)
    last = socket.bytesWritten
    if (sampling) setImmediate(sample)
  }
  setImmediate(sample)
  return () => {
    sampling = false
    return most
  }
}

// Over TLS with the addon (the kernel's room known), a body is handed to the
// socket as much at once as the kernel takes while few TLS bodies copy: a
// piece a turn of the event loop made 1 MiB bodies 0.75x nginx's speed. Under
// a crowd (here 40 clients that stopped reading) their share of the batch
// budget (1 MiB for the process) is under two pieces, and every body goes a
// piece at a time again: what a stalled client holds stays one piece at most
// (issue 47). Without the addon, always a piece at a time.
test('TLS: a body goes out in batches while few copy, a piece a turn under a crowd', async () => {
  const { file, server, port, close } = await bigFileServer()
  const clients = []
  // → the most bytes handed to the reader's socket in one turn, and its body.
  const download = async () => {
    const accepted = once(server, 'secureConnection')
    const socket = connectTls({ host: '127.0.0.1', port, ca: tls.cert, servername: 'localhost' })
    clients.push(socket) // destroyed at the end, whatever happens
    const [[serverSocket]] = await Promise.all([accepted, once(socket, 'secureConnect')])
    const most = perTurn(serverSocket)
    socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    const chunks = []
    socket.on('data', (chunk) => chunks.push(chunk))
    await once(socket, 'end')
    const [response] = parseResponses(Buffer.concat(chunks))
    return { most: most(), body: response.body }
  }
  try {
    const alone = await download()
    expect(alone.body.equals(file)).toBe(true)
    if (zcopy.zeroCopyAvailable) expect(alone.most).toBeGreaterThanOrEqual(64 * 1024)
    else expect(alone.most).toBeLessThan(48 * 1024)
    for (let i = 0; i < 40; i++) {
      const socket = connectTls({ host: '127.0.0.1', port, ca: tls.cert, servername: 'localhost' })
      clients.push(socket)
      await once(socket, 'secureConnect')
      socket.pause()
      socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    }
    const crowded = await download()
    console.log(`TLS, ${zcopy.zeroCopyAvailable ? 'native' : 'JS fallback'}: most bytes handed over in one turn, alone ${alone.most}, among 40 stalled ${crowded.most}`)
    expect(crowded.body.equals(file)).toBe(true)
    expect(crowded.most).toBeLessThan(48 * 1024) // a piece a turn, two where turns meet
  } finally {
    for (const socket of clients) socket.destroy()
    await close()
  }
})

// A response queued behind another on its TLS connection (pipelined, or
// keep-alive when the next request comes before the last response finished)
// has no socket yet when its body starts. Once it has one it is bounded as a
// first response is, by the kernel's room (or a piece at a time): a client that
// stops reading in its middle has at most one piece queued for it, not the
// window (256 KiB) or two pieces (issue 47).
test('TLS: a queued response is bounded as a first one is', async () => {
  const { file, server, port, close } = await bigFileServer()
  let serverSocket = null
  server.on('secureConnection', (socket) => { serverSocket = socket })
  const socket = connectTls({ host: '127.0.0.1', port, ca: tls.cert, servername: 'localhost' })
  try {
    await once(socket, 'secureConnect')
    socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    const chunks = []
    let received = 0
    let queued = null
    const stallAt = file.length + 1024 * 1024 // 1 MiB into the second body
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      received += chunk.length
      if (queued !== null || received < stallAt) return
      queued = -1
      socket.pause()
      // Past the stall timer (1 s), and Node's writes into the kernel's room
      setTimeout(() => {
        queued = serverSocket.writableLength
        socket.resume()
      }, 2500)
    })
    await once(socket, 'end')
    const responses = parseResponses(Buffer.concat(chunks))
    expect(responses.map((response) => response.status)).toEqual([200, 200])
    for (const response of responses) expect(response.body.equals(file)).toBe(true)
    expect(queued).toBeGreaterThanOrEqual(0)
    expect(queued).toBeLessThanOrEqual(16 * 1024)
  } finally {
    socket.destroy()
    await close()
  }
})

// The body through the response object reuses its read buffers once Node has
// called back for their writes. Many responses at once, of different files and
// ranges, some cut by their client, over TLS and HTTP/2: every byte is its own.
describe('reused read buffers, many responses at once', () => {
  const files = {}
  let dir, serve
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zcopy-reuse-'))
    for (let i = 0; i < 6; i++) {
      files[`/f${i}.bin`] = randomBytes(300 * 1024 + i * 77_777)
      writeFileSync(join(dir, `f${i}.bin`), files[`/f${i}.bin`])
    }
    serve = zcopy.serveStatic(dir)
  })
  afterAll(async () => {
    await serve.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const asks = Array.from({ length: 36 }, (_, i) => ({ path: `/f${i % 6}.bin`, start: (i * 4099) % 200_000, cut: i % 7 === 3 }))
  // Every answer its client did not cut is its file from the asked offset, byte for byte.
  const expectWholeBodies = (answers) => {
    for (const [i, body] of answers.entries()) {
      if (asks[i].cut) continue
      expect(body.equals(files[asks[i].path].subarray(asks[i].start)), `${asks[i].path} from ${asks[i].start}`).toBe(true)
    }
  }

  test('TLS', async () => {
    const app = await listen(null, https.createServer(tls, handlerFor(serve)))
    const agent = new https.Agent({ ca: tls.cert, keepAlive: true, maxSockets: 6 })
    try {
      const answers = await Promise.all(asks.map(({ path, start, cut }) => new Promise((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', servername: 'localhost', port: app.port, path, agent, headers: { range: `bytes=${start}-` } }, (res) => {
          const chunks = []
          res.on('data', (chunk) => {
            chunks.push(chunk)
            if (cut) req.destroy()
          })
          res.on('end', () => resolve(Buffer.concat(chunks)))
          res.on('error', () => resolve(null))
          res.on('aborted', () => resolve(null))
        })
        req.on('error', (err) => cut ? resolve(null) : reject(err))
        req.on('close', () => { if (cut) resolve(null) })
      })))
      expectWholeBodies(answers)
    } finally {
      agent.destroy()
      await app.close()
    }
  })

  test('HTTP/2', async () => {
    const app = await listen(null, http2.createSecureServer(tls, handlerFor(serve)))
    const client = http2.connect(`https://localhost:${app.port}`, { ca: tls.cert })
    try {
      const answers = await Promise.all(asks.map(({ path, start, cut }) => new Promise((resolve, reject) => {
        const stream = client.request({ ':path': path, range: `bytes=${start}-` })
        const chunks = []
        stream.on('data', (chunk) => {
          chunks.push(chunk)
          if (cut) stream.close(http2.constants.NGHTTP2_CANCEL)
        })
        stream.on('end', () => resolve(Buffer.concat(chunks)))
        stream.on('close', () => resolve(null))
        stream.on('error', (err) => cut ? resolve(null) : reject(err))
        stream.end()
      })))
      expectWholeBodies(answers)
    } finally {
      client.close()
      await app.close()
    }
  })

  // Each transfer reads into the chunk its last write gave back. 24 TLS clients
  // of 8 MiB each (32 chunk reads, more than the sockets' buffers take), none
  // reading on before all have some bytes, so that every transfer waits for
  // 'drain' at once: at most one chunk allocated per transfer. Handing every
  // chunk to the shared spares instead overflowed them while the transfers
  // waited, and reads allocated anew (55 here; 3.7 per 1 MiB response under
  // wrk with 256 connections, where V8's major collections then ran nonstop).
  test('TLS, 24 clients at once: at most one chunk allocated per transfer', async () => {
    const clients = 24
    const big = randomBytes(8 * 1024 * 1024)
    writeFileSync(join(dir, 'eight-mib.bin'), big)
    const app = await listen(null, https.createServer(tls, handlerFor(serve)))
    const agent = new https.Agent({ ca: tls.cert, keepAlive: true, maxSockets: clients })
    const allocUnsafe = Buffer.allocUnsafe
    let chunksAllocated = 0
    Buffer.allocUnsafe = function countingAllocUnsafe (size) {
      if (size === 256 * 1024) chunksAllocated++
      return allocUnsafe.call(this, size)
    }
    try {
      const waiting = []
      const bodies = await Promise.all(Array.from({ length: clients }, () => new Promise((resolve, reject) => {
        https.get({ host: '127.0.0.1', servername: 'localhost', port: app.port, path: '/eight-mib.bin', agent }, (res) => {
          const chunks = []
          res.on('data', (chunk) => {
            if (chunks.push(chunk) > 1) return
            res.pause()
            if (waiting.push(res) === clients) for (const paused of waiting) paused.resume()
          })
          res.on('end', () => resolve(Buffer.concat(chunks)))
        }).on('error', reject)
      })))
      for (const body of bodies) expect(body.equals(big)).toBe(true)
      expect(chunksAllocated).toBeLessThanOrEqual(clients)
    } finally {
      Buffer.allocUnsafe = allocUnsafe
      agent.destroy()
      await app.close()
    }
  })
})

test('compression middleware: the replaced write/end get the bytes, compressed by it', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const app = await listen(express().use(compression({ threshold: 0 }), serve))
  try {
    for (const name of ['app.js', 'big.bin', 'hello.txt']) {
      const answer = await request(app.port, '/' + name, { headers: { 'accept-encoding': 'gzip' } })
      expect(answer.status).toBe(200)
      expect(answer.headers['content-encoding']).toBe('gzip')
      const body = gunzipSync(answer.body)
      expect(body.equals(Buffer.from(FILES[name]))).toBe(true)
    }
  } finally {
    await app.close()
    await serve.close()
  }
})

test('a Content-Encoding someone else set: bytes go through the response object, unchanged', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const app = await listen((req, res) => {
    res.setHeader('Content-Encoding', 'gzip') // e.g. an app serving .gz it knows about
    serve(req, res, () => res.end())
  })
  try {
    const answer = await request(app.port, '/app.js.gz')
    expect(answer.headers['content-encoding']).toBe('gzip')
    expect(answer.body.equals(FILES['app.js.gz'])).toBe(true)
  } finally {
    await app.close()
    await serve.close()
  }
})

describe('HTTP/2 compat responses: the body through the response object, never respondWithFD', () => {
  let serve, app, client
  let respondWithFDCalls = 0

  function h2 (path, headers = {}) {
    return new Promise((resolve, reject) => {
      const stream = client.request({ ':path': path, ...headers })
      const chunks = []
      let head
      stream.on('response', (h) => { head = h })
      stream.on('data', (chunk) => chunks.push(chunk))
      stream.on('end', () => resolve({ status: head[':status'], headers: head, body: Buffer.concat(chunks) }))
      stream.on('error', reject)
      stream.end()
    })
  }

  beforeAll(async () => {
    serve = zcopy.serveStatic(tree.root)
    const handler = handlerFor(serve)
    app = await listen(null, http2.createSecureServer(tls, (req, res) => {
      // respondWithFD crashes the process (SIGSEGV) when the client cancels the
      // stream or closes the connection while it runs (Node 20 to 26)
      const respondWithFD = res.stream.respondWithFD
      res.stream.respondWithFD = function (...args) {
        respondWithFDCalls++
        return respondWithFD.apply(this, args)
      }
      handler(req, res)
    }))
    client = http2.connect(`https://localhost:${app.port}`, { ca: tls.cert })
  })

  afterAll(async () => {
    expect(respondWithFDCalls).toBe(0)
    client.close()
    await app.close()
    await serve.close()
  })

  test('whole files, ranges, HEAD, 304, 404 on one session, concurrently', async () => {
    const [big, hello, partial, head, missing] = await Promise.all([
      h2('/big.bin'),
      h2('/hello.txt'),
      h2('/big.bin', { range: 'bytes=1000-' }),
      h2('/big.bin', { ':method': 'HEAD' }),
      h2('/nope')
    ])
    expect(big.body.equals(FILES['big.bin'])).toBe(true)
    expect(big.headers['content-length']).toBe(String(FILES['big.bin'].length))
    expect(hello.body.toString()).toBe(FILES['hello.txt'])
    expect(hello.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(partial.status).toBe(206)
    expect(partial.body.equals(FILES['big.bin'].subarray(1000))).toBe(true)
    expect(head.status).toBe(200)
    expect(head.body.length).toBe(0)
    expect(missing.status).toBe(404)
    const again = await h2('/hello.txt', { 'if-none-match': hello.headers.etag })
    expect(again.status).toBe(304)
  })

  test('a stream cancelled mid-body: the session and the server go on', async () => {
    const stream = client.request({ ':path': '/big.bin' })
    stream.on('error', () => {})
    await once(stream, 'data')
    stream.close(http2.constants.NGHTTP2_CANCEL)
    await once(stream, 'close')
    expect((await h2('/hello.txt')).body.toString()).toBe(FILES['hello.txt'])
  })

  test('several concurrent streams of the same file share the cached descriptor safely', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      h2('/big.bin', { range: `bytes=${i * 1000}-` })))
    for (const [i, answer] of answers.entries()) {
      expect(answer.body.equals(FILES['big.bin'].subarray(i * 1000))).toBe(true)
    }
  })
})

describe('precompressed siblings', () => {
  let serve, app

  beforeAll(async () => {
    serve = zcopy.serveStatic(tree.root, { precompressed: true })
    app = await listen(handlerFor(serve))
  })

  afterAll(async () => {
    await app.close()
    await serve.close()
  })

  test.each([
    ['br, gzip', 'br', 'app.js.br'],
    ['gzip, deflate, br', 'br', 'app.js.br'],
    ['gzip', 'gzip', 'app.js.gz'],
    ['br;q=0, gzip', 'gzip', 'app.js.gz'],
    ['*', 'br', 'app.js.br'],
    ['*, br;q=0', 'gzip', 'app.js.gz'],
    ['identity', undefined, 'app.js'],
    [undefined, undefined, 'app.js']
  ])('Accept-Encoding %s → %s', async (accept, encoding, sent) => {
    const answer = await request(app.port, '/app.js', { headers: accept ? { 'accept-encoding': accept } : {} })
    expect(answer.headers['content-encoding']).toBe(encoding)
    expect(answer.headers.vary).toBe('Accept-Encoding')
    expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(answer.body.equals(Buffer.from(FILES[sent]))).toBe(true)
  })

  test('a range applies to the encoded bytes; validators differ per encoding', async () => {
    const br = await request(app.port, '/app.js', { headers: { 'accept-encoding': 'br', range: 'bytes=2-9' } })
    expect(br.status).toBe(206)
    expect(br.body.equals(FILES['app.js.br'].subarray(2, 10))).toBe(true)
    const plain = await request(app.port, '/app.js')
    expect(plain.headers.etag).not.toBe(br.headers.etag)
  })

  test('files without siblings are sent as they are, without Vary (nothing varies)', async () => {
    const answer = await request(app.port, '/hello.txt', { headers: { 'accept-encoding': 'br, gzip' } })
    expect(answer.headers['content-encoding']).toBeUndefined()
    expect(answer.headers.vary).toBeUndefined()
    expect(answer.body.toString()).toBe(FILES['hello.txt'])
  })
})

test('Transfer-Encoding: chunked set by the app: Node frames the bytes, no Content-Length beside it', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const app = await listen((req, res) => {
    res.setHeader('Transfer-Encoding', 'chunked')
    serve(req, res, () => res.end())
  })
  try {
    for (const name of ['big.bin', 'hello.txt']) {
      const answer = await request(app.port, '/' + name)
      expect(answer.status).toBe(200)
      expect(answer.headers['transfer-encoding']).toBe('chunked')
      expect(answer.headers['content-length']).toBeUndefined()
      expect(answer.body.equals(Buffer.from(FILES[name]))).toBe(true)
    }
    const partial = await request(app.port, '/big.bin', { headers: { range: 'bytes=10-19' } })
    expect(partial.status).toBe(206)
    expect(partial.body.equals(FILES['big.bin'].subarray(10, 20))).toBe(true)
  } finally {
    await app.close()
    await serve.close()
  }
})
