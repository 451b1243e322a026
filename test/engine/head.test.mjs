// pipeFile's `head` option: bytes from memory written just before the file's, on
// every kind of destination, exactly once, byte-exact.
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { startHashingChild } from '../support/child.mjs'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair, tlsPair } from '../support/net.mjs'

const { pipeFile, zeroCopyAvailable } = zcopy

const MiB = 1024 * 1024
const head = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 65537\r\n\r\n', 'latin1')

let dir
const files = {}
beforeAll(() => {
  dir = makeTempDir()
  for (const size of [0, 65537, 16 * MiB]) files[size] = makeFile(dir, `file-${size}.bin`, size)
})
afterAll(() => removeTempDir(dir))

function digest (...parts) {
  const data = Buffer.concat(parts)
  return { bytes: data.length, sha256: sha256(data) }
}

// Sends over a fresh loopback connection; resolves the result and what the peer got.
async function overTcp (source, options, { pauseMs = 0 } = {}) {
  const { client, peer } = await socketPair()
  if (pauseMs > 0) {
    peer.pause()
    setTimeout(() => peer.resume(), pauseMs)
  }
  const received = drain(peer)
  const result = await pipeFile(source, client, options)
  client.end()
  return { result, received: await received }
}

describe('to a TCP socket', () => {
  for (const size of [0, 65537, 16 * MiB]) {
    it(`writes the head, then ${size} file bytes; bytes counts the file's only`, async () => {
      const { data, file } = files[size]
      const { result, received } = await overTcp(file, { head })
      expect(result).toEqual({ bytes: size, zeroCopy: zeroCopyAvailable })
      expect(received).toEqual(digest(head, data))
    })
  }

  it('takes a string (UTF-8), a TypedArray view and a DataView; an empty head is none', async () => {
    const { data, file } = files[65537]
    const backing = Buffer.from('xxHEADyy')
    const cases = [
      ['naïve → ✓\n', Buffer.from('naïve → ✓\n')],
      [new Uint8Array(backing.buffer, backing.byteOffset + 2, 4), Buffer.from('HEAD')],
      [new DataView(backing.buffer, backing.byteOffset + 2, 4), Buffer.from('HEAD')],
      ['', Buffer.alloc(0)]
    ]
    for (const [value, bytes] of cases) {
      const { received } = await overTcp(file, { head: value, start: 1, end: 100 })
      expect(received).toEqual(digest(bytes, data.subarray(1, 101)))
    }
  })

  it('waits out a stalled reader in the middle of a large head, byte-exact', async () => {
    const { data, file } = files[16 * MiB]
    const bigHead = Buffer.alloc(8 * MiB, 'h')
    const { result, received } = await overTcp(file, { head: bigHead }, { pauseMs: 300 })
    expect(result.bytes).toBe(data.length)
    expect(received).toEqual(digest(bigHead, data))
  })

  it('goes after what Node queued on the socket', async () => {
    const { data, file } = files[65537]
    const { client, peer } = await socketPair()
    const received = drain(peer)
    client.write('queued;')
    await pipeFile(file, client, { head })
    client.end(';after')
    expect(await received).toEqual(digest(Buffer.from('queued;'), head, data, Buffer.from(';after')))
  })

  it('goes through streams on TLS, same bytes', async () => {
    const { data, file } = files[65537]
    const { client, received, close } = await tlsPair()
    try {
      const result = await pipeFile(file, client, { head })
      client.end()
      expect(result).toEqual({ bytes: data.length, zeroCopy: false })
      expect(await received).toEqual(digest(head, data))
    } finally {
      close()
    }
  })
})

describe('to files, pipes and streams', () => {
  it('writes the head into a file by path, then the range', async () => {
    const { data, file } = files[16 * MiB]
    const out = path.join(dir, 'with-head.bin')
    const result = await pipeFile(file, out, { head, start: 10, end: 5 * MiB })
    expect(result).toEqual({ bytes: 5 * MiB - 9, zeroCopy: zeroCopyAvailable })
    expect(digest(fs.readFileSync(out))).toEqual(digest(head, data.subarray(10, 5 * MiB + 1)))
  })

  it('writes the head of an empty range alone', async () => {
    const out = path.join(dir, 'head-only.bin')
    const result = await pipeFile(files[0].file, out, { head })
    expect(result.bytes).toBe(0)
    expect(fs.readFileSync(out).equals(head)).toBe(true)
  })

  it('writes the head once to an O_APPEND fd, which sendfile refuses', async () => {
    const { data, file } = files[65537]
    const out = path.join(dir, 'append-head.bin')
    fs.writeFileSync(out, 'start;')
    const fd = fs.openSync(out, 'a')
    try {
      const result = await pipeFile(file, fd, { head })
      expect(result).toEqual({ bytes: data.length, zeroCopy: false })
    } finally {
      fs.closeSync(fd)
    }
    expect(digest(fs.readFileSync(out))).toEqual(digest(Buffer.from('start;'), head, data))
  })

  it('counts the head in an fs.WriteStream\'s bytesWritten', async () => {
    const { data, file } = files[65537]
    const out = path.join(dir, 'stream-head.bin')
    const stream = fs.createWriteStream(out)
    stream.write('before;')
    await pipeFile(file, stream, { head })
    stream.end()
    await once(stream, 'close')
    expect(stream.bytesWritten).toBe(7 + head.length + data.length)
    expect(digest(fs.readFileSync(out))).toEqual(digest(Buffer.from('before;'), head, data))
  })

  it('feeds a child process through a pipe, head first', async () => {
    const { data, file } = files[16 * MiB]
    const child = startHashingChild()
    await pipeFile(file, child.stdin, { head })
    child.stdin.end()
    expect(await child.received).toEqual(digest(head, data))
  })

  it('writes the head first into any Writable', async () => {
    const { data, file } = files[65537]
    const sink = new PassThrough()
    const chunks = []
    sink.on('data', (chunk) => chunks.push(chunk))
    const result = await pipeFile(file, sink, { head })
    expect(result).toEqual({ bytes: data.length, zeroCopy: false })
    expect(digest(Buffer.concat(chunks))).toEqual(digest(head, data))
  })
})

describe('errors', () => {
  for (const bad of [42, {}, [1, 2], true]) {
    it(`throws a TypeError for head ${JSON.stringify(bad)}`, () => {
      expect(() => pipeFile(files[0].file, path.join(dir, 'x'), { head: bad }))
        .toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
    })
  }
})
