// The one read of a descriptor range (lib/engine/read-range.js), on real
// files: a buffer filled from a position, fewer bytes only at the file's end,
// system errors as Node reports them; a range handed over a chunk at a time.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readAt, readAtSync, readRange } from '../../lib/engine/read-range.js'

const readAtAsync = promisify(readAt)
let dir, file, bytes, fd

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-read-range-'))
  file = path.join(dir, 'data.bin')
  bytes = Buffer.alloc(300 * 1024)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 10)) & 0xff
  fs.writeFileSync(file, bytes)
  fd = fs.openSync(file, 'r')
})

afterAll(() => {
  fs.closeSync(fd)
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('readAt', () => {
  it('fills the buffer from the position', async () => {
    const buffer = Buffer.alloc(100 * 1024)
    expect(await readAtAsync(fd, buffer, 5000)).toBe(buffer.length)
    expect(buffer.equals(bytes.subarray(5000, 5000 + buffer.length))).toBe(true)
  })

  it('stops at the end of the file: fewer bytes, the rest of the buffer untouched', async () => {
    const buffer = Buffer.alloc(4096, 0xaa)
    expect(await readAtAsync(fd, buffer, bytes.length - 1000)).toBe(1000)
    expect(buffer.subarray(0, 1000).equals(bytes.subarray(bytes.length - 1000))).toBe(true)
    expect(buffer.subarray(1000).every((byte) => byte === 0xaa)).toBe(true)
    expect(await readAtAsync(fd, buffer, bytes.length + 10)).toBe(0)
  })

  it('reports a system error as Node does', async () => {
    const closed = fs.openSync(file, 'r')
    fs.closeSync(closed)
    await expect(readAtAsync(closed, Buffer.alloc(16), 0)).rejects.toMatchObject({ code: 'EBADF', syscall: 'read' })
  })
})

describe('readAtSync', () => {
  it('reads in chunks of the size asked, up to the end of the file', () => {
    const buffer = Buffer.alloc(bytes.length + 100)
    expect(readAtSync(fd, buffer, 0, 64 * 1024)).toBe(bytes.length)
    expect(buffer.subarray(0, bytes.length).equals(bytes)).toBe(true)
  })
})

describe('readRange', () => {
  it('hands the range over a chunk at a time, and says how much it read', async () => {
    const seen = []
    const done = await readRange(fd, 1000, 200 * 1024, 64 * 1024, (view) => seen.push(Buffer.from(view)))
    expect(done).toBe(200 * 1024)
    expect(seen.map((chunk) => chunk.length)).toEqual([65536, 65536, 65536, 8192])
    expect(Buffer.concat(seen).equals(bytes.subarray(1000, 1000 + 200 * 1024))).toBe(true)
  })

  it('stops early at the end of the file', async () => {
    let total = 0
    expect(await readRange(fd, bytes.length - 10, 1000, 64, (view) => { total += view.length })).toBe(10)
    expect(total).toBe(10)
  })

  it('rejects with what the consumer threw, and reads no further', async () => {
    let calls = 0
    const failure = new Error('consumer failed')
    await expect(readRange(fd, 0, bytes.length, 1024, () => { calls++; throw failure })).rejects.toBe(failure)
    expect(calls).toBe(1)
  })
})
