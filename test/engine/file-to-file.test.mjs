// pipeFile file to file (issue 15): copy_file_range(2) when the destination is a
// file, sendfile and then the JS copy as fallbacks, and the paths opened by the
// addon in the pool job that copies. Byte-exact at every size and range, to a
// path, to a caller's descriptor at its offset and to an fs.WriteStream; across
// filesystems (copy_file_range refuses with EXDEV); aborted mid-copy and while
// the source opens; a source truncated under the copy; FIFOs and devices handed
// back to the JS paths. No descriptor is left open. Runs on the native addon and
// on the JS fallback (ZCOPY_NATIVE=0): `zeroCopy` follows zeroCopyAvailable.
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeFile, makeTempDir, openFdCount, removeTempDir, sha256 } from '../support/files.mjs'

const { pipeFile, zeroCopyAvailable } = zcopy
const MiB = 1024 * 1024
const CHUNK = 4 * MiB // the addon's bytes per pool job (lib/engine/sendfile.js)
const SIZES = [0, 1, 4096, 65537, MiB, MiB + 7, CHUNK + 3, 2 * CHUNK + MiB + 1]

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

// → a descriptor of the writing end of the FIFO `file`, opened once a reader
// has it open (O_NONBLOCK: ENXIO until then), within 20 s.
async function writerOnceRead (file) {
  for (const deadline = Date.now() + 20_000; ; await tick(10)) {
    try {
      return fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
    } catch (err) {
      if (err.code !== 'ENXIO' || Date.now() > deadline) throw err
    }
  }
}

let dir
const files = {}
beforeAll(() => {
  dir = makeTempDir('zcopy-f2f-')
  for (const size of SIZES) files[size] = makeFile(dir, `file-${size}.bin`, size)
})
afterAll(() => removeTempDir(dir))

let outIndex = 0
const outPath = (base = dir) => path.join(base, `out-${outIndex++}.bin`)

// Another filesystem than the temporary directory's, if this machine has one
// (tmpfs on /dev/shm here, ext4 for /tmp): copy_file_range refuses such a pair
// (EXDEV) on Linux 5.19+, and before 5.3.
function otherFilesystem () {
  for (const candidate of ['/dev/shm', '/run/user', '/var/tmp']) {
    try {
      if (fs.statSync(candidate).dev === fs.statSync(dir).dev) continue
      const probe = fs.mkdtempSync(path.join(candidate, 'zcopy-f2f-'))
      return probe
    } catch {}
  }
  return null
}

describe('byte-exact to a path', () => {
  for (const size of SIZES) {
    it(`copies ${size} bytes`, async () => {
      const { data, file } = files[size]
      const out = outPath()
      expect(await pipeFile(file, out)).toEqual({ bytes: size, zeroCopy: zeroCopyAvailable })
      expect(fs.readFileSync(out).equals(data)).toBe(true)
    })
  }

  const big = 2 * CHUNK + MiB + 1
  const ranges = [[0, 0], [1, 4096], [CHUNK - 1, CHUNK + 1], [5, Infinity], [big - 1, 10 ** 12], [3, CHUNK * 2 + 10]]
  for (const [start, end] of ranges) {
    it(`copies the range ${start}-${end} (end inclusive, clamped to the file)`, async () => {
      const { data, file } = files[big]
      const out = outPath()
      const expected = data.subarray(start, end + 1)
      expect(await pipeFile(file, out, { start, end })).toEqual({ bytes: expected.length, zeroCopy: zeroCopyAvailable })
      expect(sha256(fs.readFileSync(out))).toBe(sha256(expected))
    })
  }

  it('truncates an existing, longer destination, also for an empty range past the end', async () => {
    const { data, file } = files[4096]
    const out = outPath()
    fs.writeFileSync(out, Buffer.alloc(100000, 1))
    expect((await pipeFile(file, out)).bytes).toBe(4096)
    expect(fs.readFileSync(out).equals(data)).toBe(true)
    expect((await pipeFile(file, out, { start: 5000 })).bytes).toBe(0)
    expect(fs.statSync(out).size).toBe(0)
  })

  it('takes the source as an fd, a FileHandle and a file: URL, and the destination as a Buffer and a URL', async () => {
    const { data, file } = files[MiB + 7]
    const fd = fs.openSync(file, 'r')
    const handle = await fs.promises.open(file, 'r')
    try {
      const outs = [outPath(), outPath(), outPath(), outPath()]
      await pipeFile(fd, outs[0], { start: 10 })
      await pipeFile(handle, Buffer.from(outs[1]), { start: 10 })
      await pipeFile(new URL(`file://${file}`), new URL(`file://${outs[2]}`), { start: 10 })
      await pipeFile(fd, outs[3], { start: 10 }) // the fd's own position is not used, nor moved
      for (const out of outs) expect(fs.readFileSync(out).equals(data.subarray(10))).toBe(true)
      expect(fs.fstatSync(fd).size).toBe(data.length) // still open
    } finally {
      fs.closeSync(fd)
      await handle.close()
    }
  })

  it('creates the destination with mode 0666 & ~umask, as fs.open(path, "w")', async () => {
    const out = outPath()
    const reference = outPath()
    await pipeFile(files[1].file, out)
    fs.closeSync(fs.openSync(reference, 'w'))
    expect(fs.statSync(out).mode).toBe(fs.statSync(reference).mode)
  })

  it('writes to /dev/null (a device: handed to the descriptor path)', async () => {
    expect(await pipeFile(files[MiB].file, '/dev/null')).toEqual({ bytes: MiB, zeroCopy: zeroCopyAvailable })
  })
})

describe('to a caller\'s descriptor', () => {
  for (const kind of ['path', 'fd']) {
    it(`writes at the fd's offset, advances it as sendfile does, leaves it open (source: ${kind})`, async () => {
      const { data, file } = files[CHUNK + 3]
      const out = outPath()
      const outFd = fs.openSync(out, 'w')
      const inFd = fs.openSync(file, 'r')
      try {
        fs.writeSync(outFd, 'abc')
        const result = await pipeFile(kind === 'path' ? file : inFd, outFd, { start: 1, end: CHUNK })
        expect(result).toEqual({ bytes: CHUNK, zeroCopy: zeroCopyAvailable })
        fs.writeSync(outFd, 'xyz') // at the fd's position: right after the copied bytes
        expect(fs.fstatSync(outFd).isFile()).toBe(true)
      } finally {
        fs.closeSync(outFd)
        fs.closeSync(inFd)
      }
      const expected = Buffer.concat([Buffer.from('abc'), data.subarray(1, CHUNK + 1), Buffer.from('xyz')])
      expect(sha256(fs.readFileSync(out))).toBe(sha256(expected))
    })
  }

  it('overwrites in the middle of a file from an "r+" fd\'s position, the rest kept', async () => {
    const { data, file } = files[65537]
    const out = outPath()
    const original = Buffer.alloc(200000, 0x61)
    fs.writeFileSync(out, original)
    const fd = fs.openSync(out, 'r+')
    try {
      fs.readSync(fd, Buffer.alloc(1000), 0, 1000, null) // the position is now 1000
      expect((await pipeFile(file, fd)).bytes).toBe(65537)
    } finally {
      fs.closeSync(fd)
    }
    const expected = Buffer.from(original)
    data.copy(expected, 1000)
    expect(fs.readFileSync(out).equals(expected)).toBe(true)
  })

  it('appends to an O_APPEND fd from a source fd through the copy loop (the kernel refuses the pair)', async () => {
    const { data, file } = files[MiB + 7]
    const out = outPath()
    fs.writeFileSync(out, 'start')
    const outFd = fs.openSync(out, 'a')
    const inFd = fs.openSync(file, 'r')
    try {
      expect(await pipeFile(inFd, outFd)).toEqual({ bytes: data.length, zeroCopy: false })
      expect(await pipeFile(file, outFd, { end: 9 })).toEqual({ bytes: 10, zeroCopy: false })
    } finally {
      fs.closeSync(outFd)
      fs.closeSync(inFd)
    }
    expect(fs.readFileSync(out).equals(Buffer.concat([Buffer.from('start'), data, data.subarray(0, 10)]))).toBe(true)
  })
})

describe('to an fs.WriteStream', () => {
  it('after its queued writes, at its position, bytesWritten counted, usable after', async () => {
    const { data, file } = files[CHUNK + 3]
    const out = outPath()
    const stream = fs.createWriteStream(out)
    stream.write('before')
    expect(await pipeFile(file, stream, { start: 2 })).toEqual({ bytes: data.length - 2, zeroCopy: zeroCopyAvailable })
    stream.end('after')
    await once(stream, 'close')
    expect(stream.bytesWritten).toBe(data.length - 2 + 11)
    expect(sha256(fs.readFileSync(out))).toBe(sha256(Buffer.concat([Buffer.from('before'), data.subarray(2), Buffer.from('after')])))
  })

  it('with nothing queued, open or still opening', async () => {
    const { data, file } = files[65537]
    for (const waitOpen of [true, false]) {
      const out = outPath()
      const stream = fs.createWriteStream(out)
      if (waitOpen) await once(stream, 'ready')
      expect((await pipeFile(file, stream)).bytes).toBe(data.length)
      stream.end()
      await once(stream, 'close')
      expect(fs.readFileSync(out).equals(data)).toBe(true)
    }
  })
})

describe('across filesystems', () => {
  let other = null
  beforeAll(() => { other = otherFilesystem() })
  afterAll(() => { if (other) removeTempDir(other) })

  it('copies both ways by path and into a descriptor at an offset, byte-exact', async (context) => {
    if (other === null) context.skip()
    const { data, file } = files[2 * CHUNK + MiB + 1]
    const there = path.join(other, 'source.bin')
    fs.writeFileSync(there, data)
    for (const [source, base] of [[file, other], [there, dir]]) {
      const out = outPath(base)
      expect(await pipeFile(source, out, { start: 1000 })).toEqual({ bytes: data.length - 1000, zeroCopy: zeroCopyAvailable })
      expect(sha256(fs.readFileSync(out))).toBe(sha256(data.subarray(1000)))

      const fdOut = outPath(base)
      const fd = fs.openSync(fdOut, 'w')
      try {
        fs.writeSync(fd, 'abc')
        expect((await pipeFile(source, fd, { start: 1000 })).bytes).toBe(data.length - 1000)
        fs.writeSync(fd, 'xyz')
      } finally {
        fs.closeSync(fd)
      }
      expect(sha256(fs.readFileSync(fdOut))).toBe(sha256(Buffer.concat([Buffer.from('abc'), data.subarray(1000), Buffer.from('xyz')])))
    }
  })
})

describe('FIFOs by path (handed back to the JS paths)', () => {
  let fifo
  beforeAll(() => {
    fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
  })

  it('a FIFO source: copied until its writer closes it (no known length, so no zero-copy)', async () => {
    const out = outPath()
    const copying = pipeFile(fifo, out)
    const writer = fs.createWriteStream(fifo)
    writer.end(Buffer.alloc(300000, 7))
    expect(await copying).toEqual({ bytes: 300000, zeroCopy: false })
    expect(fs.readFileSync(out).equals(Buffer.alloc(300000, 7))).toBe(true)
  })

  it('a FIFO destination: the file goes into the pipe', async () => {
    const { data, file } = files[MiB + 7]
    const chunks = []
    const reader = fs.createReadStream(fifo).on('data', (chunk) => chunks.push(chunk))
    const ended = once(reader, 'end') // may come before pipeFile's promise settles
    expect(await pipeFile(file, fifo)).toEqual({ bytes: data.length, zeroCopy: zeroCopyAvailable })
    await ended
    expect(Buffer.concat(chunks).equals(data)).toBe(true)
  })

  it('aborted while the source waits for a writer: rejects at once, creates nothing, leaves no descriptor', async () => {
    await tick(50)
    const before = openFdCount()
    const out = outPath()
    const controller = new AbortController()
    const copying = pipeFile(fifo, out, { signal: controller.signal })
    await tick(50)
    const reason = new Error('stop')
    controller.abort(reason)
    const err = await copying.catch((err) => err)
    expect(err.name).toBe('AbortError')
    expect(err.cause).toBe(reason)
    expect(fs.existsSync(out)).toBe(false)
    // Let the open waiting in the pool return; what it opened is then closed.
    // The writer's end is opened without blocking, once that open waits for
    // it: a blocking open would hang this worker for good if the pool (busy on
    // a loaded machine) had not started it yet.
    fs.closeSync(await writerOnceRead(fifo))
    await tick(100)
    expect(openFdCount()).toBe(before)
  })
})

describe('aborts, truncation, descriptors', () => {
  let sparse
  beforeAll(() => {
    sparse = path.join(dir, 'sparse-256m.bin')
    const fd = fs.openSync(sparse, 'w')
    fs.ftruncateSync(fd, 256 * MiB)
    fs.writeSync(fd, 'the end', 0, 'utf8', 256 * MiB - 7)
    fs.closeSync(fd)
  })

  for (const destination of ['path', 'fd']) {
    it(`a 256 MiB copy to a ${destination} aborted mid-way settles with the AbortError, no descriptor left`, async () => {
      await tick(20)
      const before = openFdCount()
      const out = outPath()
      const outFd = destination === 'fd' ? fs.openSync(out, 'w') : -1
      try {
        const controller = new AbortController()
        const reason = new Error('enough')
        let reports = 0
        const copying = pipeFile(sparse, destination === 'fd' ? outFd : out, {
          signal: controller.signal,
          onProgress () { if (++reports === 1) setImmediate(() => controller.abort(reason)) }
        })
        const err = await copying.catch((err) => err)
        expect(err.name).toBe('AbortError')
        expect(err.code).toBe('ABORT_ERR')
        expect(err.cause).toBe(reason)
        expect(reports).toBeGreaterThan(0)
        expect(fs.statSync(out).size).toBeLessThan(256 * MiB)
        if (outFd >= 0) expect(fs.fstatSync(outFd).isFile()).toBe(true) // the caller's, still open
      } finally {
        if (outFd >= 0) fs.closeSync(outFd)
      }
      expect(openFdCount()).toBe(before)
    })
  }

  // An abort that comes while the source opens rejects at once (the addon's pool
  // job, or fs.promises.open on the fallback, closes the file when its open
  // returns); the destination is never created after the rejection.
  it('aborted right after the call (queued or opening): AbortError, no destination created, no descriptor left', async () => {
    await tick(20)
    const before = openFdCount()
    const outs = []
    for (let i = 0; i < 20; i++) {
      const controller = new AbortController()
      const out = outPath()
      const copying = pipeFile(sparse, out, { signal: controller.signal })
      if (i % 2) await Promise.resolve()
      controller.abort()
      expect((await copying.catch((err) => err)).name).toBe('AbortError')
      if (!fs.existsSync(out)) outs.push(out)
    }
    await tick(100)
    expect(outs.filter((out) => fs.existsSync(out))).toEqual([])
    expect(openFdCount()).toBe(before)
  })

  it('a source truncated under the copy rejects with ERR_ZCOPY_TRUNCATED, as to a socket; no descriptor left', async () => {
    const { data } = files[2 * CHUNK + MiB + 1]
    const file = path.join(dir, 'shrinking.bin')
    fs.writeFileSync(file, data)
    await tick(20)
    const before = openFdCount()
    let truncated = false
    const err = await pipeFile(file, outPath(), {
      onProgress () {
        if (truncated) return
        truncated = true
        fs.truncateSync(file, MiB)
      }
    }).catch((err) => err)
    expect(truncated).toBe(true)
    expect(err.code).toBe('ERR_ZCOPY_TRUNCATED')
    expect(openFdCount()).toBe(before)
  })

  it('errors name the path, as fs.open does; the destination is not created when the source fails', async () => {
    const missing = path.join(dir, 'missing')
    const out = outPath()
    const err = await pipeFile(missing, out).catch((err) => err)
    expect(err).toMatchObject({ code: 'ENOENT', syscall: 'open', path: missing, errno: -2 })
    expect(err.message).toBe(`ENOENT: no such file or directory, open '${missing}'`)
    expect(fs.existsSync(out)).toBe(false)
    const noDir = path.join(dir, 'no', 'such', 'dir')
    expect(await pipeFile(files[1].file, noDir).catch((err) => err)).toMatchObject({ code: 'ENOENT', syscall: 'open', path: noDir })
    expect(await pipeFile(dir, out).catch((err) => err)).toMatchObject({ code: 'EISDIR', syscall: 'read' })
    expect(await pipeFile(files[1].file, dir).catch((err) => err)).toMatchObject({ code: 'EISDIR', syscall: 'open' })
  })
})
