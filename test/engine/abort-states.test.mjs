// Abort wins in every state of a transfer: created, starting (an abort from
// onProgress while start() sends from the event loop), waiting for the socket
// (connecting, or with writes still queued), in the pool, done. Each transfer
// settles exactly once, with the right result, and leaves no listener behind.
// Runs on the native addon and on the JS fallback (ZCOPY_NATIVE=0).
import { getEventListeners, once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { fdsOpenedSince, makeFile, makeTempDir, openFds, removeTempDir } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

const { pipeFile, sendfile, zeroCopyAvailable } = zcopy
const MiB = 1024 * 1024

let dir
let small
let big
beforeAll(() => {
  dir = makeTempDir()
  small = makeFile(dir, 'small.bin', 4096)
  big = makeFile(dir, 'big.bin', 32 * MiB)
  fs.readFileSync(small.file) // page-cached: the native eager path sends it during start()
  fs.readFileSync(big.file)
})
afterAll(() => removeTempDir(dir))

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

// Observes `promise` settling: → { count, value, error } once it did, after a
// pause in which nothing else (a late progress report, a second settle) may happen.
async function settled (promise, progress = { calls: 0 }) {
  const outcome = { count: 0 }
  promise.then((value) => { outcome.count++; outcome.value = value }, (err) => { outcome.count++; outcome.error = err })
  await promise.catch(() => {})
  const calls = progress.calls
  await tick(50)
  expect(progress.calls).toBe(calls) // nothing reported after the settle
  return outcome
}

function expectAbortError (outcome, reason) {
  expect(outcome.count).toBe(1)
  expect(outcome.error).toBeDefined()
  expect(outcome.error.name).toBe('AbortError')
  expect(outcome.error.code).toBe('ABORT_ERR')
  if (reason !== undefined) expect(outcome.error.cause).toBe(reason)
}

function expectNoListeners (signal, socket, closeListeners) {
  expect(getEventListeners(signal, 'abort')).toHaveLength(0)
  if (socket) expect(socket.listenerCount('close')).toBe(closeListeners)
}

// A socket pair whose reader drains; → { client, peer, received, close }.
async function readingPair () {
  const { client, peer } = await socketPair()
  peer.on('error', () => {})
  client.on('error', () => {})
  const received = drain(peer).catch(() => null)
  return { client, peer, received, close () { client.destroy(); peer.destroy() } }
}

describe('created', () => {
  it('a signal aborted before the call: pipeFile and sendfile reject at once, nothing sent', async () => {
    const pair = await readingPair()
    const fd = fs.openSync(small.file, 'r')
    try {
      const controller = new AbortController()
      const reason = new Error('before')
      controller.abort(reason)
      expectAbortError(await settled(pipeFile(small.file, pair.client, { signal: controller.signal })), reason)
      expectAbortError(await settled(sendfile(pair.client._handle.fd, fd, 0, 4096, { signal: controller.signal })), reason)
      pair.client.end()
      expect((await pair.received).bytes).toBe(0)
    } finally {
      fs.closeSync(fd)
      pair.close()
    }
  })

  it('aborted right after the call, while the source opens: rejects, nothing sent, no fd left', async () => {
    const before = openFds()
    const pair = await readingPair()
    const closeListeners = pair.client.listenerCount('close')
    try {
      const controller = new AbortController()
      const reason = new Error('created')
      const sending = pipeFile(small.file, pair.client, { signal: controller.signal })
      controller.abort(reason)
      expectAbortError(await settled(sending), reason)
      expectNoListeners(controller.signal, pair.client, closeListeners)
      expect(pair.client.writableCorked).toBe(0)
      pair.client.end()
      expect((await pair.received).bytes).toBe(0)
    } finally {
      pair.close()
    }
    await tick(50)
    expect(fdsOpenedSince(before)).toEqual([])
  })
})

describe('starting: an abort from onProgress during start()', () => {
  it('pipeFile of a small cached file to a socket rejects with the AbortError', async () => {
    const pair = await readingPair()
    const closeListeners = pair.client.listenerCount('close')
    try {
      const controller = new AbortController()
      const reason = new Error('in onProgress')
      const progress = { calls: 0 }
      const sending = pipeFile(small.file, pair.client, {
        signal: controller.signal,
        onProgress () { progress.calls++; controller.abort(reason) }
      })
      expectAbortError(await settled(sending, progress), reason)
      expectNoListeners(controller.signal, pair.client, closeListeners)
    } finally {
      pair.close()
    }
  })

  it('sendfile of a small cached file to a socket rejects with the AbortError', async () => {
    const pair = await readingPair()
    const fd = fs.openSync(small.file, 'r')
    try {
      const controller = new AbortController()
      const reason = new Error('in onProgress')
      const progress = { calls: 0 }
      const sending = sendfile(pair.client._handle.fd, fd, 0, 4096, {
        signal: controller.signal,
        onProgress () { progress.calls++; controller.abort(reason) }
      })
      expectAbortError(await settled(sending, progress), reason)
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    } finally {
      fs.closeSync(fd)
      pair.close()
    }
  })

  it('a big file stops at the first report: pipeFile and sendfile reject, not all bytes sent', async () => {
    for (const api of ['pipeFile', 'sendfile']) {
      const pair = await readingPair()
      const fd = fs.openSync(big.file, 'r')
      try {
        const controller = new AbortController()
        const progress = { calls: 0 }
        const options = {
          signal: controller.signal,
          onProgress () { progress.calls++; controller.abort() }
        }
        const sending = api === 'pipeFile'
          ? pipeFile(fd, pair.client, options)
          : sendfile(pair.client._handle.fd, fd, 0, big.data.length, options)
        expectAbortError(await settled(sending, progress))
        expect(progress.calls).toBeGreaterThan(0)
        pair.client.destroy()
        const received = await pair.received
        expect(received === null || received.bytes < big.data.length).toBe(true)
      } finally {
        fs.closeSync(fd)
        pair.close()
      }
    }
  })
})

describe('waiting for the socket', () => {
  it('still connecting: rejects with the AbortError, the socket is left alone', async () => {
    const server = net.createServer((socket) => socket.resume())
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = net.connect(server.address().port, '127.0.0.1')
    try {
      expect(socket.connecting).toBe(true)
      const closeListeners = socket.listenerCount('close')
      const controller = new AbortController()
      const sending = pipeFile(small.file, socket, { signal: controller.signal })
      controller.abort()
      expectAbortError(await settled(sending))
      expectNoListeners(controller.signal, socket, closeListeners)
      if (socket.connecting) await once(socket, 'connect')
      expect(socket.destroyed).toBe(false)
      expect(socket.writableCorked).toBe(0)
    } finally {
      socket.destroy()
      server.close()
    }
  })

  for (const how of ['signal', 'socket closed']) {
    it(`with writes still queued, ${how}: settles once; the socket is not left corked`, async () => {
      const { client, peer } = await socketPair()
      peer.pause()
      client.on('error', () => {})
      const closeListeners = client.listenerCount('close')
      try {
        client.write(Buffer.alloc(16 * MiB)) // stays queued: the peer does not read
        expect(client.writableLength).toBeGreaterThan(0)
        const controller = new AbortController()
        const progress = { calls: 0 }
        const sending = pipeFile(small.file, client, { signal: controller.signal, onProgress () { progress.calls++ } })
        await tick(50) // opened, waiting for the queued writes
        if (how === 'signal') controller.abort()
        else client.destroy()
        const outcome = await settled(sending, progress)
        expect(progress.calls).toBe(0)
        if (how === 'signal') {
          expectAbortError(outcome)
          expect(client.writableCorked).toBe(0)
          // sendfile had not begun: the socket is left alone. The stream fallback
          // had queued its first chunk: the socket would get a partial body.
          expect(client.destroyed).toBe(!zeroCopyAvailable)
        } else {
          expect(outcome.count).toBe(1)
          expect(outcome.error.code).toBe('ERR_STREAM_PREMATURE_CLOSE')
        }
        expectNoListeners(controller.signal, null)
        // The write barrier (copy/stream-copy.js flushed()) keeps its own 'close' listener
        // until the queued writes are out; the transfer's own listener is gone.
        if (how === 'signal') expect(client.listenerCount('close')).toBeLessThanOrEqual(closeListeners + 1)
      } finally {
        client.destroy()
        peer.destroy()
      }
    })
  }
})

describe('in the pool / on the loop', () => {
  it('a big file to a file: aborted after the first chunk, rejects, the rest is not written', async () => {
    const out = path.join(dir, 'pool-out.bin')
    const outFd = fs.openSync(out, 'w')
    const inFd = fs.openSync(big.file, 'r')
    const before = openFds()
    try {
      for (const api of ['pipeFile', 'sendfile']) {
        fs.ftruncateSync(outFd, 0)
        const controller = new AbortController()
        const progress = { calls: 0 }
        const options = {
          signal: controller.signal,
          onProgress () { if (++progress.calls === 1) setImmediate(() => controller.abort()) }
        }
        const sending = api === 'pipeFile'
          ? pipeFile(inFd, outFd, { ...options, start: 0 })
          : sendfile(outFd, inFd, 0, big.data.length, options)
        expectAbortError(await settled(sending, progress))
        expect(fs.fstatSync(outFd).size).toBeLessThan(big.data.length)
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
        expect(fdsOpenedSince(before)).toEqual([])
      }
    } finally {
      fs.closeSync(inFd)
      fs.closeSync(outFd)
    }
  })

  it('a big file to a stalled socket: an abort or a socket closed by Node settles it once', async () => {
    for (const how of ['signal', 'socket closed']) {
      const { client, peer } = await socketPair()
      peer.pause()
      client.on('error', () => {})
      try {
        const controller = new AbortController()
        const progress = { calls: 0 }
        const sending = pipeFile(big.file, client, { signal: controller.signal, onProgress () { progress.calls++ } })
        let last = -1
        while (progress.calls !== last || progress.calls === 0) { // until the socket is full
          last = progress.calls
          await tick(50)
        }
        if (how === 'signal') controller.abort()
        else client.destroy()
        const outcome = await settled(sending, progress)
        if (how === 'signal') expectAbortError(outcome)
        else expect(outcome.error.code).toBe('ERR_STREAM_PREMATURE_CLOSE')
        expect(outcome.count).toBe(1)
        expect(client.destroyed).toBe(true) // its peer got a partial body
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
      } finally {
        client.destroy()
        peer.destroy()
      }
    }
  })
})

describe('done', () => {
  it('an abort after the transfer settled changes nothing', async () => {
    const pair = await readingPair()
    const fd = fs.openSync(small.file, 'r')
    const closeListeners = pair.client.listenerCount('close')
    try {
      const controller = new AbortController()
      const sent = await pipeFile(small.file, pair.client, { signal: controller.signal })
      expect(sent.bytes).toBe(4096)
      const raw = await sendfile(pair.client._handle.fd, fd, 0, 4096, { signal: controller.signal })
      expect(raw).toBe(4096)
      controller.abort()
      expectNoListeners(controller.signal, pair.client, closeListeners)
      await tick(20)
      expect(pair.client.destroyed).toBe(false)
      pair.client.end()
      expect((await pair.received).bytes).toBe(8192)
    } finally {
      fs.closeSync(fd)
      pair.close()
    }
  })
})

describe('the hot path', () => {
  it.skipIf(!zeroCopyAvailable)('a small cached range sent during start() hooks nothing on the socket', async () => {
    const { sendRange } = await import('../../lib/engine/pipe-file.js')
    const pair = await readingPair()
    const fd = fs.openSync(small.file, 'r')
    try {
      const closeListeners = pair.client.listenerCount('close')
      const sending = sendRange(fd, 0, 4096, pair.client, Buffer.from('HEAD'))
      expect(pair.client.listenerCount('close')).toBe(closeListeners)
      expect(await sending).toEqual({ bytes: 4096, zeroCopy: true })
      expect(pair.client.writableCorked).toBe(0)
      pair.client.end()
      expect((await pair.received).bytes).toBe(4100)
    } finally {
      fs.closeSync(fd)
      pair.close()
    }
  })
})
