// 64-bit offsets: a sparse file just over 4 GiB, with a range at its end.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { connect, startSink } from '../support/net.mjs'

const SIZE = 4 * 1024 ** 3 + 3 * 1024 * 1024 + 5
const TAIL = 4 * 1024 * 1024

let dir
let file
let tail
beforeAll(() => {
  dir = makeTempDir()
  file = path.join(dir, 'sparse.bin')
  tail = crypto.randomBytes(TAIL)
  const fd = fs.openSync(file, 'w')
  fs.ftruncateSync(fd, SIZE)
  fs.writeSync(fd, tail, 0, TAIL, SIZE - TAIL)
  fs.closeSync(fd)
})
afterAll(() => removeTempDir(dir))

it('sends the last bytes of a file over 4 GiB over loopback TCP', async () => {
  const sink = await startSink()
  try {
    const socket = await connect(sink.port)
    const result = await zcopy.pipeFile(file, socket, { start: SIZE - TAIL })
    socket.end()
    expect(result).toEqual({ bytes: TAIL, zeroCopy: zcopy.zeroCopyAvailable })
    expect(await sink.received[0]).toEqual({ bytes: TAIL, sha256: sha256(tail) })
  } finally {
    await sink.close()
  }
})

it('copies a range spanning the 4 GiB boundary file to file', async () => {
  const out = path.join(dir, 'span.bin')
  const start = SIZE - TAIL - 1024
  expect(start).toBeLessThan(4 * 1024 ** 3)
  const result = await zcopy.pipeFile(file, out, { start, end: SIZE - 1 })
  expect(result.bytes).toBe(SIZE - start)
  const expected = Buffer.alloc(SIZE - start)
  tail.copy(expected, expected.length - TAIL)
  expect(sha256(fs.readFileSync(out))).toBe(sha256(expected))
})
