// zcopy.createReadStream: fs.createReadStream when consumed, sendfile when piped.
import fs from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

let dir
let source
beforeAll(() => {
  dir = makeTempDir()
  source = makeFile(dir, 'source.bin', 5 * 1024 * 1024 + 3)
})
afterAll(() => removeTempDir(dir))

// The events, with their payload shapes, in order, until 'close'. A 'data'
// listener starts the flow, so it is only recorded when asked for.
function record (stream, names = ['open', 'ready', 'data', 'end', 'close', 'error']) {
  const events = []
  for (const name of names) {
    stream.on(name, (arg) => events.push(name === 'data' ? `data:${arg.length}` : name === 'error' ? `error:${arg.code}` : name))
  }
  return new Promise((resolve) => stream.on('close', () => resolve(events)))
}

describe('consumed normally, it is fs.createReadStream', () => {
  const cases = [
    [undefined],
    [{ start: 10, end: 200000 }],
    [{ highWaterMark: 1000, start: 5, end: 5000 }],
    [{ encoding: 'hex', end: 99 }]
  ]
  for (const [options] of cases) {
    it(`emits the same events and data for ${JSON.stringify(options)}`, async () => {
      const ours = zcopy.createReadStream(source.file, options)
      const theirs = fs.createReadStream(source.file, options)
      const [a, b] = await Promise.all([record(ours), record(theirs)])
      expect(a).toEqual(b)
      expect(ours.bytesRead).toBe(theirs.bytesRead)
      expect(ours.zeroCopy).toBe(false)
    })
  }

  it('reports a missing file with the same error', async () => {
    const missing = path.join(dir, 'missing.bin')
    const [a, b] = await Promise.all([record(zcopy.createReadStream(missing)), record(fs.createReadStream(missing))])
    expect(a).toEqual(b)
    expect(a).toContain('error:ENOENT')
  })

  it('pipes into a plain Writable through the stream path', async () => {
    const stream = zcopy.createReadStream(source.file)
    const sink = new PassThrough()
    const chunks = []
    sink.on('data', (c) => chunks.push(c))
    stream.pipe(sink)
    await once(sink, 'end')
    expect(stream.zeroCopy).toBe(false)
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(source.data))
  })
})

describe('piped into a socket or file', () => {
  it('.pipe(socket) moves the bytes with sendfile and ends the socket', async () => {
    const { client, peer } = await socketPair()
    const received = drain(peer)
    const stream = zcopy.createReadStream(source.file)
    const events = record(stream, ['open', 'ready', 'end', 'close', 'error'])
    expect(stream.pipe(client)).toBe(client)
    expect(await received).toEqual({ bytes: source.data.length, sha256: sha256(source.data) })
    expect(await events).toEqual(['open', 'ready', 'end', 'close'])
    expect(stream.bytesRead).toBe(source.data.length)
    expect(stream.zeroCopy).toBe(zcopy.zeroCopyAvailable)
    client.destroy()
  })

  it('.pipe(socket, { end: false }) leaves the socket open', async () => {
    const { client, peer } = await socketPair()
    const received = drain(peer)
    const stream = zcopy.createReadStream(source.file, { start: 100, end: 1099 })
    stream.pipe(client, { end: false })
    await once(stream, 'end')
    client.end('!')
    const expected = Buffer.concat([source.data.subarray(100, 1100), Buffer.from('!')])
    expect(await received).toEqual({ bytes: expected.length, sha256: sha256(expected) })
  })

  it('stream.pipeline(stream, fs.createWriteStream()) copies a range', async () => {
    const out = path.join(dir, 'pipeline.bin')
    const stream = zcopy.createReadStream(source.file, { start: 7, end: 4 * 1024 * 1024 })
    await pipeline(stream, fs.createWriteStream(out))
    expect(fs.readFileSync(out).equals(source.data.subarray(7, 4 * 1024 * 1024 + 1))).toBe(true)
    expect(stream.zeroCopy).toBe(zcopy.zeroCopyAvailable)
  })

  // On streams, .pipe() leaves the source open when the destination dies (as fs
  // does; stream.pipeline is the fix); the zero-copy hand-off closes it.
  it.skipIf(!zcopy.zeroCopyAvailable)('closes its file and stays quiet when the socket goes away', async () => {
    const { client, peer } = await socketPair()
    client.on('error', () => {})
    peer.once('data', () => peer.resetAndDestroy())
    const big = makeFile(dir, 'big.bin', 32 * 1024 * 1024)
    const stream = zcopy.createReadStream(big.file)
    const errors = []
    stream.on('error', (err) => errors.push(err))
    stream.pipe(client)
    await once(stream, 'close')
    expect(errors).toEqual([])
    expect(stream.destroyed).toBe(true)
  })
})
