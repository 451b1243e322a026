// Raw HTTP/1 exchanges over loopback for the native lane's tests: bytes as
// written, bytes as received, no client library in between.
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'

export const portOf = (server) => Number(new URL(server.url).port)

// Writes `chunks` (latin1 strings or Buffers) on one connection, `gapMs`
// apart; with `end`, then half-closes it (shutdown(SHUT_WR)), or, with
// `endWhen`, once every chunk is written and endWhen(bytes received) says so.
// Resolves with all it received until the server closed the connection, or,
// after `timeoutMs`, with what came and `timedOut` (then it cuts the
// connection); `reset` says whether the connection was reset.
export async function exchange (port, chunks, { gapMs = 0, end = false, endWhen = null, timeoutMs = 10_000 } = {}) {
  const socket = net.connect(port, '127.0.0.1')
  socket.setNoDelay(true)
  const received = []
  let reset = false
  let written = false // every chunk: endWhen is asked only then
  const endIfDone = () => {
    if (written && endWhen !== null && !socket.writableEnded && endWhen(Buffer.concat(received))) socket.end()
  }
  socket.on('data', (chunk) => {
    received.push(chunk)
    endIfDone()
  })
  socket.on('error', () => { reset = true }) // a cut (ECONNRESET, EPIPE): part of the outcome
  const closed = new Promise((resolve) => socket.once('close', resolve)) // not once(): an 'error' would reject it
  await once(socket, 'connect')
  for (const chunk of chunks) {
    if (socket.destroyed) break
    socket.write(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)
    if (gapMs > 0) await sleep(gapMs)
  }
  written = true
  endIfDone()
  if (end && !socket.destroyed) socket.end()
  let timer
  const timedOut = await Promise.race([
    closed.then(() => false),
    new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs, true) })
  ])
  clearTimeout(timer)
  if (timedOut) {
    socket.destroy()
    await closed
  }
  return { bytes: Buffer.concat(received), timedOut, reset }
}

// Whether `bytes` hold the whole answer to one request of `method`.
export function wholeAnswer (bytes, method) {
  const headEnd = bytes.indexOf('\r\n\r\n')
  if (headEnd < 0) return false
  const head = bytes.subarray(0, headEnd).toString('latin1')
  if (method === 'HEAD' || /^HTTP\/1\.[01] (1\d\d|204|304) /.test(head)) return true
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)
  return length === null || bytes.length >= headEnd + 4 + Number(length[1])
}

// The bytes with every Date value replaced (the one field that may differ).
export const withoutDate = (bytes) => bytes.toString('latin1').replace(/\r\nDate: [^\r\n]*/g, '\r\nDate: -')

// How many descriptors process `pid` holds.
export const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length

// How many of them are sockets (not the files the servers keep open).
export function socketCount (pid) {
  let count = 0
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++
    } catch {} // closed meanwhile
  }
  return count
}
