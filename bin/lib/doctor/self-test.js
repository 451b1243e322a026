'use strict'

// One-second self-test: a file of random bytes sent with pipeFile by the server
// end of a loopback TCP connection in this process, as many times as fits in the
// time, every byte checked by the client end. Says which path moved the bytes
// (pipeFile's zeroCopy) and how fast. Every descriptor, socket and the file are
// gone when it settles, whatever happened.

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { once } = require('node:events')
const { listen } = require('../../../tools/listen')

const FILE_SIZE = 8 * 1024 * 1024
const RECEIVE_BUFFER = 1024 * 1024
// Past this, an unfinished self-test is reported as timed out.
const GRACE_MS = 2000

// Checks what arrives against `data` repeated. `onRead` is the receiving
// socket's onread callback (one reused buffer: the receiver costs as little as
// it can, so that the figure is the sender's); `until(n)` resolves once n bytes
// arrived and rejects if the connection ends or fails first.
function receiver (data) {
  let received = 0
  let firstBadByte = null
  let waiting = null
  let ended = null
  const settle = () => {
    if (waiting === null) return
    if (received >= waiting.bytes) waiting.resolve()
    else if (ended !== null) waiting.reject(ended)
    else return
    waiting = null
  }
  return {
    onRead (length, buffer) {
      for (let i = 0; i < length;) {
        const at = received % data.length
        const n = Math.min(length - i, data.length - at)
        if (firstBadByte === null && !buffer.subarray(i, i + n).equals(data.subarray(at, at + n))) firstBadByte = received
        i += n
        received += n
      }
      settle()
    },
    watch (socket) {
      const end = (err) => {
        ended = ended ?? err
        settle()
      }
      socket.on('error', end)
      socket.on('close', () => end(new Error('the receiving socket closed early')))
    },
    received: () => received,
    firstBadByte: () => firstBadByte,
    until (bytes, signal) {
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason)
        signal.addEventListener('abort', onAbort, { once: true })
        waiting = {
          bytes,
          resolve: () => { signal.removeEventListener('abort', onAbort); resolve() },
          reject: (err) => { signal.removeEventListener('abort', onAbort); reject(err) }
        }
        settle()
      })
    }
  }
}

// `promise`, or a rejection with the signal's reason once it aborts, whichever
// comes first: a transfer that ignored its signal cannot hang the doctor.
function unlessAborted (promise, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function errorInfo (err, timedOut) {
  if (timedOut) return { code: 'ETIMEDOUT', message: 'the self-test did not finish in time' }
  return { code: (err && err.code) ?? null, message: String(err && err.message) }
}

// → { path: 'sendfile' | 'stream' | null, zeroCopy, verified, bytes,
//     transfers, seconds, throughput (bytes/s), error: { code, message } | null }
async function selfTest ({ pipeFile, dir, durationMs = 1000 }) {
  const file = path.join(dir, 'self-test.bin')
  const data = crypto.randomBytes(FILE_SIZE)
  const signal = AbortSignal.timeout(durationMs + GRACE_MS)
  const server = net.createServer()
  const sockets = []
  server.on('connection', (socket) => sockets.push(socket))
  const result = { path: null, zeroCopy: false, verified: false, bytes: 0, transfers: 0, seconds: 0, throughput: 0, error: null }
  const check = receiver(data)
  try {
    fs.writeFileSync(file, data)
    const { port } = await listen(server, 0, '127.0.0.1')
    const accepted = once(server, 'connection', { signal })
    accepted.catch(() => {}) // awaited below, unless the connect fails first
    const client = net.connect({ port, host: '127.0.0.1', onread: { buffer: Buffer.allocUnsafe(RECEIVE_BUFFER), callback: check.onRead } })
    sockets.push(client)
    check.watch(client)
    await once(client, 'connect', { signal })
    // The server's end of the connection sends, as a server's would.
    const [peer] = await accepted
    const started = performance.now()
    let zeroCopy = true
    do {
      const moved = await unlessAborted(pipeFile(file, peer, { signal }), signal)
      zeroCopy = zeroCopy && moved.zeroCopy
      result.transfers += 1
      result.bytes += moved.bytes
    } while (performance.now() - started < durationMs)
    await check.until(result.bytes, signal)
    result.seconds = (performance.now() - started) / 1000
    result.throughput = result.bytes / result.seconds
    result.zeroCopy = zeroCopy
    result.path = zeroCopy ? 'sendfile' : 'stream'
    result.verified = check.firstBadByte() === null && check.received() === result.bytes
    if (!result.verified) {
      const at = check.firstBadByte()
      result.error = {
        code: 'ERR_ZCOPY_SELF_TEST_BYTES',
        message: at === null
          ? `received ${check.received()} bytes, sent ${result.bytes}`
          : `the bytes received differ from the file's at byte ${at}`
      }
    }
  } catch (err) {
    result.error = errorInfo(err, signal.aborted)
  } finally {
    for (const socket of sockets) socket.destroy()
    server.close()
    fs.rmSync(file, { force: true })
  }
  return result
}

module.exports = { selfTest, FILE_SIZE }
