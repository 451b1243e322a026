'use strict'

// The stalled clients of bench/http/stalled.js, in their own process: they ask
// for a file and then never read. Driven over IPC:
//   { open: { protocol: 'tls' | 'h2', port, paths, connections, streams, answered, group } }
//     → { opened, failed, keyExchange } once every request got its response head
//     (or failed); with answered: false (a server that never answers) once every
//     request was sent. group: the only key exchange the clients offer (null:
//     their Node's default list); keyExchange: the one the server chose
//   { close: true } → { closed } once every connection is gone
//
// A TLS client is a tls.Socket that writes one GET and never consumes what
// comes back: Node buffers up to the socket's highWaterMark, then stops reading
// from the kernel, whose receive buffer then fills; the server's writes back up.
// An HTTP/2 client is one session per connection with `streams` requests on it,
// none of them read: each stream's window closes once its data is buffered.

const http2 = require('node:http2')
const tls = require('node:tls')

const sockets = []
let keyExchange = null

// The TLS options every client connects with: `group` alone, when given.
function tlsOptions (group) {
  return { rejectUnauthorized: false, servername: 'localhost', ...(group && { ecdhCurve: group }) }
}

function noteKeyExchange (socket) {
  keyExchange ??= socket.getEphemeralKeyInfo()?.name ?? null
}

function head (path) {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: zcopy-stalled\r\n\r\n`
}

// → a promise of true once the response's status line arrived, false on failure.
function stalledTls (port, path, answered, group) {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', ...tlsOptions(group) })
    sockets.push(socket)
    socket.once('error', () => resolve(false))
    socket.once('close', () => resolve(false))
    socket.once('secureConnect', () => {
      noteKeyExchange(socket)
      socket.write(head(path), () => { if (!answered) resolve(true) })
      // One look at the first bytes, then nothing is read any more.
      socket.once('readable', () => resolve(true))
    })
  })
}

function stalledH2 (port, paths, streams, answered, group) {
  return new Promise((resolve) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, tlsOptions(group))
    sockets.push(session)
    session.on('error', () => {})
    session.once('connect', () => noteKeyExchange(session.socket))
    let waiting = streams
    let ok = 0
    const settle = (good) => {
      if (good) ok++
      if (--waiting === 0) resolve(ok)
    }
    for (let i = 0; i < streams; i++) {
      const stream = session.request({ ':path': paths[i % paths.length] })
      stream.on('error', () => {})
      stream.once(answered ? 'response' : 'ready', () => settle(true))
      stream.once('close', () => settle(false))
      stream.pause()
    }
  })
}

async function open ({ protocol, port, paths, connections, streams, answered = true, group = null }) {
  keyExchange = null
  const started = []
  for (let i = 0; i < connections; i++) {
    started.push(protocol === 'h2'
      ? stalledH2(port, paths, streams, answered, group)
      : stalledTls(port, paths[i % paths.length], answered, group).then(Number))
    // A few at a time: the server's accept queue and handshakes keep up.
    if (i % 50 === 49) await Promise.all(started.slice(-50))
  }
  const results = await Promise.all(started)
  const opened = results.reduce((sum, n) => sum + n, 0)
  const asked = protocol === 'h2' ? connections * streams : connections
  return { opened, failed: asked - opened, keyExchange }
}

async function close () {
  const closing = sockets.splice(0).map((socket) => new Promise((resolve) => {
    if (socket.destroyed) return resolve()
    socket.once('close', resolve)
    socket.destroy()
  }))
  await Promise.all(closing)
  return { closed: closing.length }
}

process.on('message', async (message) => {
  if (message.open) process.send(await open(message.open))
  if (message.close) process.send(await close())
})
