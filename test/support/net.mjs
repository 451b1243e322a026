// Loopback TCP (and TLS) peers that hash what they receive.
import { execFileSync, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import net from 'node:net'
import tls from 'node:tls'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { tls as tlsFixture } from './http.mjs'

// A server whose connections each resolve `received` with { bytes, sha256 } at end.
export async function startSink () {
  const received = []
  const server = net.createServer((socket) => {
    socket.on('error', () => {})
    const hash = crypto.createHash('sha256')
    let bytes = 0
    received.push(new Promise((resolve) => {
      socket.on('data', (chunk) => { bytes += chunk.length; hash.update(chunk) })
      socket.on('end', () => { socket.end(); resolve({ bytes, sha256: hash.digest('hex') }) })
    }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: server.address().port,
    received,
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

export async function connect (port) {
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  return socket
}

// A client socket connected to a fresh server-side socket: returns both ends.
export async function socketPair () {
  const server = net.createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const accepted = once(server, 'connection')
  const client = await connect(server.address().port)
  const [peer] = await accepted
  server.close()
  return { client, peer }
}

// Reads everything from `socket` until it ends; resolves { bytes, sha256 }.
export function drain (socket) {
  const hash = crypto.createHash('sha256')
  let bytes = 0
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk) => { bytes += chunk.length; hash.update(chunk) })
    socket.on('end', () => resolve({ bytes, sha256: hash.digest('hex') }))
    socket.on('error', reject)
  })
}

// A TLS client connected to a fresh TLS server (self-signed fixture certificate):
// → { client, received, close }, `received` as drain() gives it for the server side.
export async function tlsPair () {
  const server = tls.createServer({ key: tlsFixture.key, cert: tlsFixture.cert })
  const received = new Promise((resolve) => server.on('secureConnection', (socket) => resolve(drain(socket))))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const client = tls.connect({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false })
  await once(client, 'secureConnect')
  return {
    client,
    received,
    close () {
      client.destroy()
      server.close()
    }
  }
}

// Whether ss(8) is here, for settledNotSent.
export const ssInstalled = spawnSync('ss', ['-V']).status === 0

// Bytes queued and not yet sent on the TCP connection from `localPort` to
// `remotePort` (ss's `notsent`, absent when there are none).
function notSent (localPort, remotePort) {
  const filter = `( sport = :${localPort} and dport = :${remotePort} )`
  const out = execFileSync('ss', ['-tniH', 'state', 'established', filter], { encoding: 'utf8' })
  const match = /notsent:(\d+)/.exec(out)
  return match ? Number(match[1]) : 0
}

// notSent once it stops changing (the reader stopped, the sender filled what
// it may), read every 50 ms for at most 10 s.
export async function settledNotSent (localPort, remotePort) {
  let last = -1
  for (let i = 0; i < 200; i++) {
    const now = notSent(localPort, remotePort)
    if (now === last && now > 0) return now
    last = now
    await sleep(50)
  }
  return last
}
