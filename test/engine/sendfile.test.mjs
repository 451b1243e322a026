// zcopy.sendfile: the raw transfer, native or fallback, between real descriptors.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeFile, makeTempDir, openFdCount, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

const { sendfile } = zcopy

let dir
let source
let big // larger than loopback socket buffers, so a paused reader stalls the sender
beforeAll(() => {
  dir = makeTempDir()
  source = makeFile(dir, 'source.bin', 3 * 1024 * 1024 + 17)
  big = makeFile(dir, 'big.bin', 48 * 1024 * 1024)
})
afterAll(() => removeTempDir(dir))

function withFds (fn) {
  return async () => {
    const inFd = fs.openSync(source.file, 'r')
    const outPath = path.join(dir, `out-${Math.random()}.bin`)
    const outFd = fs.openSync(outPath, 'w')
    try {
      await fn({ inFd, outFd, outPath })
    } finally {
      fs.closeSync(inFd)
      fs.closeSync(outFd)
    }
  }
}

describe('sendfile', () => {
  it('copies a whole file byte-exact and resolves with the length', withFds(async ({ inFd, outFd, outPath }) => {
    const bytes = await sendfile(outFd, inFd, 0, source.data.length)
    expect(bytes).toBe(source.data.length)
    expect(sha256(fs.readFileSync(outPath))).toBe(sha256(source.data))
  }))

  it('copies a range starting at an offset', withFds(async ({ inFd, outFd, outPath }) => {
    const bytes = await sendfile(outFd, inFd, 1000, 70000)
    expect(bytes).toBe(70000)
    expect(fs.readFileSync(outPath).equals(source.data.subarray(1000, 71000))).toBe(true)
  }))

  it('moves zero bytes for length 0', withFds(async ({ inFd, outFd, outPath }) => {
    expect(await sendfile(outFd, inFd, 0, 0)).toBe(0)
    expect(fs.statSync(outPath).size).toBe(0)
  }))

  it('reports progress at chunk boundaries, ending at the length', withFds(async ({ inFd, outFd }) => {
    const seen = []
    await sendfile(outFd, inFd, 0, source.data.length, { onProgress: (n) => seen.push(n) })
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.at(-1)).toBe(source.data.length)
    expect([...seen].sort((a, b) => a - b)).toEqual(seen)
  }))

  it('rejects with ERR_ZCOPY_TRUNCATED when the file ends before the range', withFds(async ({ inFd, outFd }) => {
    const err = await sendfile(outFd, inFd, source.data.length - 10, 100).catch((err) => err)
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('ERR_ZCOPY_TRUNCATED')
  }))

  it('rejects closed descriptors with a Node-style EBADF', async () => {
    const fd = fs.openSync(source.file, 'r')
    fs.closeSync(fd)
    const out = fs.openSync(path.join(dir, 'ebadf.bin'), 'w')
    try {
      const err = await sendfile(out, fd, 0, 10).catch((err) => err)
      expect(err.code).toBe('EBADF')
      expect(err.errno).toBe(-9)
      expect(typeof err.syscall).toBe('string')
      expect(err.message).toMatch(/^EBADF: bad file descriptor/)
    } finally {
      fs.closeSync(out)
    }
  })

  it('rejects a directory as the source with EISDIR', async () => {
    const dirFd = fs.openSync(dir, 'r')
    const out = fs.openSync(path.join(dir, 'eisdir.bin'), 'w')
    try {
      const err = await sendfile(out, dirFd, 0, 10).catch((err) => err)
      expect(err.code).toBe('EISDIR')
    } finally {
      fs.closeSync(dirFd)
      fs.closeSync(out)
    }
  })

  describe('bad arguments throw synchronously', () => {
    const cases = [
      ['outFd', ['1', 0, 0, 1], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['outFd', [-1, 0, 0, 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['outFd', [1.5, 0, 0, 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['inFd', [1, null, 0, 1], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['inFd', [1, 2 ** 31, 0, 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['offset', [1, 0, -1, 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['offset', [1, 0, NaN, 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['offset', [1, 0, 10n, 1], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['length', [1, 0, 0, Number.MAX_SAFE_INTEGER + 1], RangeError, 'ERR_OUT_OF_RANGE'],
      ['length', [1, 0, 0, Infinity], RangeError, 'ERR_OUT_OF_RANGE'],
      ['length', [1, 0, 0, undefined], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['options', [1, 0, 0, 1, 'x'], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['options.signal', [1, 0, 0, 1, { signal: {} }], TypeError, 'ERR_INVALID_ARG_TYPE'],
      ['options.onProgress', [1, 0, 0, 1, { onProgress: 1 }], TypeError, 'ERR_INVALID_ARG_TYPE']
    ]
    for (const [name, args, type, code] of cases) {
      it(`${name}: ${args.map(String).join(', ')}`, () => {
        let thrown
        try {
          sendfile(...args)
        } catch (err) {
          thrown = err
        }
        expect(thrown).toBeInstanceOf(type)
        expect(thrown.code).toBe(code)
        expect(thrown.message).toContain(name)
      })
    }
  })

  it('rejects at once with an AbortError for an aborted signal', withFds(async ({ inFd, outFd }) => {
    const controller = new AbortController()
    controller.abort(new Error('stop'))
    const err = await sendfile(outFd, inFd, 0, 10, { signal: controller.signal }).catch((err) => err)
    expect(err.name).toBe('AbortError')
    expect(err.code).toBe('ABORT_ERR')
    expect(err.cause.message).toBe('stop')
  }))

  it('aborts a transfer stalled on a full socket and closes its descriptors', async () => {
    const { client, peer } = await socketPair()
    const inFd = fs.openSync(big.file, 'r')
    peer.pause()
    const before = openFdCount()
    const controller = new AbortController()
    let progressed = 0
    const pending = sendfile(client._handle.fd, inFd, 0, big.data.length, {
      signal: controller.signal,
      onProgress: (n) => { progressed = n }
    })
    try {
      // Wait until the socket buffers are full and the transfer is waiting.
      let last = -1
      while (progressed !== last || progressed === 0) {
        last = progressed
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(progressed).toBeLessThan(big.data.length)
      controller.abort()
      const err = await pending.catch((err) => err)
      expect(err.name).toBe('AbortError')
      expect(openFdCount()).toBe(before)
    } finally {
      fs.closeSync(inFd)
      client.destroy()
      peer.destroy()
    }
  })

  it('resumes a stalled transfer when the reader catches up, bytes exact', async () => {
    const { client, peer } = await socketPair()
    const inFd = fs.openSync(big.file, 'r')
    peer.pause()
    try {
      const received = drain(peer)
      peer.pause()
      const sent = sendfile(client._handle.fd, inFd, 0, big.data.length)
      await new Promise((resolve) => setTimeout(resolve, 2000))
      peer.resume()
      expect(await sent).toBe(big.data.length)
      client.end()
      expect(await received).toEqual({ bytes: big.data.length, sha256: sha256(big.data) })
    } finally {
      fs.closeSync(inFd)
      client.destroy()
    }
  })

  it('keeps writing to the descriptor it was given after the caller closes it', async () => {
    const { client, peer } = await socketPair()
    const inFd = fs.openSync(source.file, 'r')
    try {
      const received = drain(peer)
      peer.pause()
      const fd = fs.openSync(path.join(dir, 'closing.bin'), 'w')
      const sent = sendfile(fd, inFd, 0, source.data.length)
      fs.closeSync(fd)
      // The fd number is free again; whatever takes it must not receive file bytes.
      const reused = fs.openSync(path.join(dir, 'reused.bin'), 'w')
      expect(await sent).toBe(source.data.length)
      fs.closeSync(reused)
      if (zcopy.zeroCopyAvailable) {
        expect(fs.statSync(path.join(dir, 'reused.bin')).size).toBe(0)
        expect(sha256(fs.readFileSync(path.join(dir, 'closing.bin')))).toBe(sha256(source.data))
      }
      peer.resume()
      client.end()
      expect((await received).bytes).toBe(0)
    } finally {
      fs.closeSync(inFd)
      client.destroy()
    }
  })
})
