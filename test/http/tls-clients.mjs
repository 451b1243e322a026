// Hostile-but-valid TLS clients for the HTTPS trap tests (issue 23.1): the two
// shapes that make Node's HTTPS server cut responses, answer 400 or leak sockets.

import net from 'node:net'
import tls from 'node:tls'
import { Duplex } from 'node:stream'
import { once } from 'node:events'
import { readdirSync, readlinkSync } from 'node:fs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Counts HTTP/1.1 responses (Content-Length bodies) as their bytes arrive,
// without keeping the bodies.
function responseCounter () {
  const done = []
  let head = Buffer.alloc(0)
  let bodyLeft = -1
  return {
    done,
    partial: () => bodyLeft > 0 || head.length > 0,
    push (chunk) {
      while (chunk.length > 0) {
        if (bodyLeft > 0) {
          const taken = Math.min(bodyLeft, chunk.length)
          bodyLeft -= taken
          chunk = chunk.subarray(taken)
          if (bodyLeft === 0) bodyLeft = -1
          continue
        }
        head = Buffer.concat([head, chunk])
        chunk = Buffer.alloc(0)
        const end = head.indexOf('\r\n\r\n')
        if (end === -1) return
        const text = head.subarray(0, end).toString('latin1')
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] || 0)
        done.push({ status: Number(text.split(' ')[1]), length })
        chunk = head.subarray(end + 4)
        head = Buffer.alloc(0)
        bodyLeft = length > 0 ? length : -1
      }
    }
  }
}

// A TLS connection over a TCP socket that the caller can cork, so that two TLS
// records written one after the other leave in one TCP write.
async function corkableTls (port, ca) {
  const raw = net.connect(port, '127.0.0.1')
  await once(raw, 'connect')
  raw.setNoDelay(true)
  const wire = new Duplex({
    read () { raw.resume() },
    write (chunk, encoding, callback) { raw.write(chunk); callback() }, // raw may be corked
    final (callback) { raw.end(); callback() }
  })
  raw.on('data', (chunk) => { if (!wire.push(chunk)) raw.pause() })
  raw.on('end', () => wire.push(null))
  raw.on('error', (err) => wire.destroy(err))
  wire.on('close', () => raw.destroy())
  const socket = tls.connect({ socket: wire, ca, servername: 'localhost' })
  await once(socket, 'secureConnect')
  return { socket, raw }
}

function write (socket, text) {
  return new Promise((resolve, reject) => socket.write(text, (err) => err ? reject(err) : resolve()))
}

function get (path) {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`
}

// The pipelining trap: GET `big` (a large response) and leave it unread for
// `holdMs`; meanwhile GET `small[0]` and `small[1]` as two TLS records
// `waitMs` later (`sameTcpWrite`: both records in one TCP write, else `gapMs`
// apart, while the server is busy). Node's
// HTTPS server, with the first response backed up, pauses its parser after the
// first small request; the second record reaches the paused parser
// (HPE_PAUSED): response 1 is cut, or a 400 is sent.
// → { responses: [{ status, length }], cut: a response was left partial }
export async function pipelinedTrap (port, ca, { big, small, holdMs = 500, sameTcpWrite = true, waitMs = 100, gapMs = 20 }) {
  const { socket, raw } = await corkableTls(port, ca)
  const counter = responseCounter()
  socket.pause()
  socket.on('data', (chunk) => counter.push(chunk))
  socket.on('error', () => {})
  await write(socket, get(big))
  await sleep(waitMs)
  if (sameTcpWrite) raw.cork()
  await write(socket, get(small[0]))
  if (!sameTcpWrite) await sleep(gapMs)
  await write(socket, get(small[1]))
  if (sameTcpWrite) raw.uncork()
  await sleep(holdMs)
  socket.resume()
  const closed = Promise.race([once(socket, 'close'), once(socket, 'end')])
  const complete = new Promise((resolve) => {
    const check = () => { if (counter.done.length === 3 && !counter.partial()) resolve() }
    socket.on('data', check)
  })
  await Promise.race([closed, complete, sleep(20000)])
  const cut = counter.partial() || counter.done.length < 3
  socket.destroy()
  return { responses: counter.done, cut }
}

// The reset trap: `count` TLS connections, each sends GET `path` and resets
// (RST) 0–3 ms later while the server answers. Node's HTTPS server keeps some
// of those sockets open for ever.
export async function resetTrap (port, ca, { path, count = 400, parallel = 40 }) {
  let next = 0
  async function one () {
    const raw = net.connect(port, '127.0.0.1')
    raw.on('error', () => {})
    const socket = tls.connect({ socket: raw, ca, servername: 'localhost' })
    socket.on('error', () => {})
    await once(socket, 'secureConnect')
    socket.write(get(path))
    await sleep(next % 4)
    const closed = once(raw, 'close')
    raw.resetAndDestroy()
    socket.destroy()
    await closed
  }
  async function lane () {
    while (next < count) {
      next++
      await one().catch(() => {})
    }
  }
  await Promise.all(Array.from({ length: parallel }, lane))
}

// Sockets (TCP, listening ones included) open in the process `pid`.
export function socketCount (pid) {
  let count = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++
    } catch {
      // closed while listing
    }
  }
  return count
}

// Polls `probe()` until it returns `want` or `ms` pass; → the last value.
export async function settle (probe, want, ms = 5000) {
  const until = Date.now() + ms
  let value = await probe()
  while (value !== want && Date.now() < until) {
    await sleep(50)
    value = await probe()
  }
  return value
}
