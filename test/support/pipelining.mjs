// The pipelining tests' shared half (test/http/pipelining-bound.test.mjs,
// test/lane/pipelining.test.mjs): the server in a child process of its own
// (test/http/children/pipelining-server.mjs), which counts the requests
// reaching the app and reports its heap, and raw clients that pipeline.

import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { makeRoot } from './files.mjs'

export const MiB = 2 ** 20
// Bigger than what the kernel's buffers on both ends take on loopback, so that
// a client that does not read stalls the response.
export const BIG = 32 * MiB

// A temporary folder (`prefix`) with the files both tests serve (big.bin,
// mid.bin, small.txt) and `extra`: → { root, files (name → bytes) }.
export function servedRoot (prefix, extra = {}) {
  const files = {
    'big.bin': randomBytes(BIG),
    'mid.bin': randomBytes(2 * MiB + 123),
    'small.txt': Buffer.from('small and kept in memory\n'.repeat(40)),
    ...extra
  }
  return { root: makeRoot(files, prefix), files }
}

// One GET with a Host, nothing else (34 bytes for /big.bin).
export const REQUEST = (path) => `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`

// The child serving `root` as `kind` says (http, express, sendFile, or
// http+lane, express+lane, either +offer: see the child), started with
// --expose-gc. → { port, handled(), heap(), compressed(), kill() }
export async function startServer (kind, root) {
  const child = fork(new URL('../http/children/pipelining-server.mjs', import.meta.url), [kind, root], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--expose-gc'] })
  const [ready] = await once(child, 'message')
  const ask = (cmd) => {
    child.send({ cmd })
    return once(child, 'message').then(([reply]) => reply)
  }
  return {
    port: ready.port,
    // The requests that reached the app (not those the lane answered itself).
    handled: () => ask('handled').then((reply) => reply.handled),
    // The heap in use after two full collections.
    heap: () => ask('heap').then((reply) => reply.heap),
    compressed: () => ask('compressed'),
    async kill () {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill()
      await exited
    }
  }
}

export async function connect (port) {
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

// The requests that reached the app once their count stopped moving for
// `quietMs`, or as soon as it passed `bound`.
export async function settledCount (server, bound, quietMs = 1500) {
  let count = await server.handled()
  let since = Date.now()
  while (Date.now() - since < quietMs && count <= bound) {
    await sleep(100)
    const now = await server.handled()
    if (now !== count) since = Date.now()
    count = now
  }
  return count
}

// Writes `requests` ([{ path, method = 'GET', headers = {} }]) pipelined, in
// one write, and reads their responses in order from the connection's raw
// bytes (a HEAD's and a 304's without a body). → [{ status, headers, body }]
export function exchange (socket, requests) {
  if (socket.destroyed || socket.readableEnded) return Promise.reject(new Error('the connection was closed before the requests were sent'))
  socket.write(requests.map(({ path, method = 'GET', headers = {} }) =>
    `${method} ${path} HTTP/1.1\r\nHost: a\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`).join(''))
  return new Promise((resolve, reject) => {
    const responses = []
    let buffered = Buffer.alloc(0)
    const onData = (chunk) => {
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        const headEnd = buffered.indexOf('\r\n\r\n')
        if (headEnd < 0) return
        const [statusLine, ...lines] = buffered.subarray(0, headEnd).toString('latin1').split('\r\n')
        const headers = Object.fromEntries(lines.map((line) => {
          const colon = line.indexOf(':')
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
        }))
        const status = Number(statusLine.split(' ')[1])
        const bodyless = requests[responses.length].method === 'HEAD' || status === 304
        const length = bodyless ? 0 : Number(headers['content-length'] ?? NaN)
        if (Number.isNaN(length)) return reject(new Error(`no Content-Length: ${statusLine}`))
        if (buffered.length < headEnd + 4 + length) return
        responses.push({ status, headers, body: buffered.subarray(headEnd + 4, headEnd + 4 + length) })
        buffered = buffered.subarray(headEnd + 4 + length)
        if (responses.length === requests.length) {
          socket.off('data', onData)
          socket.off('close', onClose)
          return resolve(responses)
        }
      }
    }
    const onClose = () => reject(new Error(`connection closed after ${responses.length} of ${requests.length} responses`))
    socket.on('data', onData)
    socket.on('close', onClose)
  })
}
