// zcopy.pipeFile over real sockets, files, pipes and streams, byte-exact.
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { startHashingChild } from '../support/child.mjs'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { connect, drain, socketPair, startSink, tlsPair } from '../support/net.mjs'

const { pipeFile, zeroCopyAvailable } = zcopy

let dir
let sink
const files = {}
beforeAll(async () => {
  dir = makeTempDir()
  for (const size of [0, 1, 65535, 65536, 65537, 16 * 1024 * 1024]) {
    files[size] = makeFile(dir, `file-${size}.bin`, size)
  }
  sink = await startSink()
})
afterAll(async () => {
  await sink.close()
  removeTempDir(dir)
})

async function sendOverTcp (source, options) {
  const index = sink.received.length
  const socket = await connect(sink.port)
  const result = await pipeFile(source, socket, options)
  socket.end()
  const received = await waitForReceived(index)
  return { result, received }
}

async function waitForReceived (index) {
  while (sink.received.length <= index) await new Promise((resolve) => setTimeout(resolve, 5))
  return sink.received[index]
}

describe('to a TCP socket', () => {
  for (const size of [0, 1, 65535, 65536, 65537, 16 * 1024 * 1024]) {
    it(`sends ${size} bytes byte-exact`, async () => {
      const { data, file } = files[size]
      const { result, received } = await sendOverTcp(file)
      expect(result).toEqual({ bytes: size, zeroCopy: zeroCopyAvailable })
      expect(await received).toEqual({ bytes: size, sha256: sha256(data) })
    })
  }

  const ranges = [[0, 0], [1, 65535], [65535, 65536], [1000, 16 * 1024 * 1024 - 1], [16 * 1024 * 1024 - 1, Infinity], [5, 10 ** 12]]
  for (const [start, end] of ranges) {
    it(`sends the range ${start}-${end} (end inclusive, clamped to the file)`, async () => {
      const { data, file } = files[16 * 1024 * 1024]
      const expected = data.subarray(start, end + 1)
      const { result, received } = await sendOverTcp(file, { start, end })
      expect(result.bytes).toBe(expected.length)
      expect(await received).toEqual({ bytes: expected.length, sha256: sha256(expected) })
    })
  }

  it('accepts an fd and a FileHandle as the source and leaves them open', async () => {
    const { data, file } = files[65537]
    const fd = fs.openSync(file, 'r')
    const handle = await fs.promises.open(file, 'r')
    try {
      expect((await (await sendOverTcp(fd)).received).sha256).toBe(sha256(data))
      expect((await (await sendOverTcp(handle)).received).sha256).toBe(sha256(data))
      expect(fs.fstatSync(fd).size).toBe(data.length)
      expect((await handle.stat()).size).toBe(data.length)
    } finally {
      fs.closeSync(fd)
      await handle.close()
    }
  })

  it('sends what Node queued first; writes made meanwhile wait for the file bytes', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const { client, peer } = await socketPair()
    const received = drain(peer)
    client.write('head:')
    const sending = pipeFile(file, client)
    client.write(':tail')
    const result = await sending
    expect(result.bytes).toBe(data.length)
    client.end()
    const expected = Buffer.concat([Buffer.from('head:'), data, Buffer.from(':tail')])
    const got = await received
    expect(got.bytes).toBe(expected.length)
    // The stream fallback interleaves later writes, as .pipe() does.
    if (result.zeroCopy) expect(got.sha256).toBe(sha256(expected))
  })

  it('flushes a write still pending at call time before the first file byte', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const { client, peer } = await socketPair()
    const received = drain(peer)
    // Larger than the socket buffers: still queued in Node when pipeFile is called.
    const head = Buffer.alloc(8 * 1024 * 1024, 'h')
    expect(client.write(head)).toBe(false)
    const result = await pipeFile(file, client)
    client.end()
    const expected = Buffer.concat([head, data])
    expect(await received).toEqual({ bytes: expected.length, sha256: sha256(expected) })
    expect(result.bytes).toBe(data.length)
  })

  it('waits for a connecting socket', async () => {
    const { data, file } = files[65536]
    const index = sink.received.length
    const socket = net.connect(sink.port, '127.0.0.1')
    expect(socket.connecting).toBe(true)
    expect((await pipeFile(file, socket)).bytes).toBe(data.length)
    socket.end()
    expect((await waitForReceived(index)).sha256).toBe(sha256(data))
  })

  it('reports progress ending at the byte count', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const seen = []
    const socket = await connect(sink.port)
    await pipeFile(file, socket, { onProgress: (n) => seen.push(n) })
    socket.end()
    expect(seen.at(-1)).toBe(data.length)
  })

  it('rejects when the socket closes mid-transfer and destroys nothing else', async () => {
    const { file } = files[16 * 1024 * 1024]
    const { client, peer } = await socketPair()
    peer.pause()
    const sending = pipeFile(file, client)
    setTimeout(() => client.destroy(), 50)
    const err = await sending.catch((err) => err)
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('ERR_STREAM_PREMATURE_CLOSE')
    peer.destroy()
  })

  it('rejects when the peer resets mid-transfer, and destroys the socket', async () => {
    const { file } = files[16 * 1024 * 1024]
    const { client, peer } = await socketPair()
    client.on('error', () => {})
    peer.once('data', () => peer.resetAndDestroy())
    const err = await pipeFile(file, client).catch((err) => err)
    expect(err).toBeInstanceOf(Error)
    expect(['EPIPE', 'ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE'], err.stack + err.syscall).toContain(err.code)
    expect(client.destroyed).toBe(true)
  })

  it('aborts through a signal with an AbortError', async () => {
    const { file } = files[16 * 1024 * 1024]
    const { client, peer } = await socketPair()
    peer.pause()
    const controller = new AbortController()
    const sending = pipeFile(file, client, { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    const err = await sending.catch((err) => err)
    expect(err.name).toBe('AbortError')
    expect(client.destroyed).toBe(true)
    peer.destroy()
  })
})

describe('to files, pipes and streams', () => {
  it('copies file to file by path, with a range', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const out = path.join(dir, 'copy.bin')
    const result = await pipeFile(file, out, { start: 3, end: 65538 })
    expect(result).toEqual({ bytes: 65536, zeroCopy: zeroCopyAvailable })
    expect(fs.readFileSync(out).equals(data.subarray(3, 65539))).toBe(true)
  })

  it('writes to an fd at its current position and leaves it open', async () => {
    const { data, file } = files[65537]
    const out = path.join(dir, 'fd-dest.bin')
    const fd = fs.openSync(out, 'w')
    try {
      fs.writeSync(fd, 'abc')
      await pipeFile(file, fd)
      fs.writeSync(fd, 'xyz')
    } finally {
      fs.closeSync(fd)
    }
    expect(fs.readFileSync(out).equals(Buffer.concat([Buffer.from('abc'), data, Buffer.from('xyz')]))).toBe(true)
  })

  it('appends to an O_APPEND fd through the copy loop', async () => {
    const { data, file } = files[65535]
    const out = path.join(dir, 'append.bin')
    fs.writeFileSync(out, 'start')
    const fd = fs.openSync(out, 'a')
    try {
      const result = await pipeFile(file, fd)
      expect(result).toEqual({ bytes: data.length, zeroCopy: false })
    } finally {
      fs.closeSync(fd)
    }
    expect(fs.readFileSync(out).equals(Buffer.concat([Buffer.from('start'), data]))).toBe(true)
  })

  it('writes into an fs.WriteStream after its queued writes, and keeps it usable', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const out = path.join(dir, 'write-stream.bin')
    const stream = fs.createWriteStream(out)
    stream.write('before')
    const result = await pipeFile(file, stream)
    expect(result).toEqual({ bytes: data.length, zeroCopy: zeroCopyAvailable })
    stream.end('after')
    await once(stream, 'close')
    expect(stream.bytesWritten).toBe(data.length + 11)
    expect(sha256(fs.readFileSync(out))).toBe(sha256(Buffer.concat([Buffer.from('before'), data, Buffer.from('after')])))
  })

  it('feeds a child process through a pipe', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const child = startHashingChild()
    const result = await pipeFile(file, child.stdin)
    child.stdin.end()
    expect(result).toEqual({ bytes: data.length, zeroCopy: zeroCopyAvailable })
    expect(await child.received).toEqual({ bytes: data.length, sha256: sha256(data) })
  })

  it('falls back to streams for an arbitrary Writable, same bytes', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const chunks = []
    const writable = new Writable({
      highWaterMark: 1024,
      write (chunk, _encoding, callback) { chunks.push(chunk); setImmediate(callback) }
    })
    const result = await pipeFile(file, writable, { start: 7 })
    expect(result).toEqual({ bytes: data.length - 7, zeroCopy: false })
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(data.subarray(7)))
    expect(writable.writableEnded).toBe(false)
  })

  it('destroys a Writable that fails mid-copy and rejects with its error', async () => {
    const { file } = files[16 * 1024 * 1024]
    const writable = new Writable({
      write (_chunk, _encoding, callback) { callback(new Error('disk full')) }
    })
    const err = await pipeFile(file, writable).catch((err) => err)
    expect(err.message).toBe('disk full')
    expect(writable.destroyed).toBe(true)
  })

  it('falls back to streams for a TLS socket, same bytes', async () => {
    const { data, file } = files[16 * 1024 * 1024]
    const { client, received, close } = await tlsPair()
    try {
      const result = await pipeFile(file, client)
      client.end()
      expect(result).toEqual({ bytes: data.length, zeroCopy: false })
      expect(await received).toEqual({ bytes: data.length, sha256: sha256(data) })
    } finally {
      close()
    }
  })
})

describe('errors', () => {
  it('rejects a missing source with ENOENT', async () => {
    const err = await pipeFile(path.join(dir, 'missing'), path.join(dir, 'x')).catch((err) => err)
    expect(err.code).toBe('ENOENT')
  })

  it('rejects a directory as the source with EISDIR', async () => {
    const err = await pipeFile(dir, path.join(dir, 'x')).catch((err) => err)
    expect(err.code).toBe('EISDIR')
  })

  it('rejects a truncated source with ERR_ZCOPY_TRUNCATED and destroys the socket', async () => {
    const { data } = files[16 * 1024 * 1024]
    const file = path.join(dir, 'shrinking.bin')
    fs.writeFileSync(file, data)
    const { client, peer } = await socketPair()
    peer.pause()
    // The file shrinks once the transfer has fixed its length and begun (its
    // first progress report), not after a delay: on a loaded machine the
    // source's open and fstat can come after any delay, and then see the file
    // already short, and send it whole.
    let shrunk = false
    const onProgress = () => {
      if (shrunk) return
      shrunk = true
      fs.truncateSync(file, 1024 * 1024)
      peer.resume()
    }
    const sending = pipeFile(file, client, { onProgress })
    const err = await sending.catch((err) => err)
    expect(err.code).toBe('ERR_ZCOPY_TRUNCATED')
    expect(client.destroyed).toBe(true)
    peer.destroy()
  })

  const bad = [
    ['source', () => pipeFile(42.5, '/dev/null'), RangeError, 'ERR_OUT_OF_RANGE'],
    ['source', () => pipeFile({}, '/dev/null'), TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['destination', () => pipeFile('/dev/null', {}), TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['destination', () => pipeFile('/dev/null', -3), RangeError, 'ERR_OUT_OF_RANGE'],
    ['options.start', () => pipeFile('/dev/null', '/dev/null', { start: -1 }), RangeError, 'ERR_OUT_OF_RANGE'],
    ['options.start', () => pipeFile('/dev/null', '/dev/null', { start: 5, end: 4 }), RangeError, 'ERR_OUT_OF_RANGE'],
    ['options.end', () => pipeFile('/dev/null', '/dev/null', { end: '9' }), TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['options.signal', () => pipeFile('/dev/null', '/dev/null', { signal: 1 }), TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['options.onProgress', () => pipeFile('/dev/null', '/dev/null', { onProgress: 'x' }), TypeError, 'ERR_INVALID_ARG_TYPE']
  ]
  for (const [name, call, type, code] of bad) {
    it(`throws synchronously for a bad ${name}`, () => {
      expect(call).toThrow(type)
      try { call() } catch (err) { expect(err.code).toBe(code) }
    })
  }
})
