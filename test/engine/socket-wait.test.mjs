// Issue 15: a pool job sending to a socket whose reader keeps up waits for it
// in the pool (poll, at most 1 ms per wait and 4 ms per job) instead of going
// back to the event loop for every full socket buffer; a reader that does not
// keep up is waited for on the event loop. Bytes, progress and abort must come
// out as before, and the pool must stay free for other work.
import { execFile } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pipeFile } from '../../lib/index.js'
import { zeroCopyAvailable } from '../../lib/engine/binding.js'
import { makeFile, makeTempDir, openFdCount, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

const MiB = 1024 * 1024
const SIZE = 96 * MiB
const slowReaderChild = fileURLToPath(new URL('./children/slow-reader-pool.cjs', import.meta.url))

let dir
let big
beforeAll(() => {
  dir = makeTempDir()
  big = makeFile(dir, 'big.bin', SIZE) // just written: in the page cache
})
afterAll(() => removeTempDir(dir))

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// The open descriptor count once it is `expected`, or after a second.
async function fdCountSettled (expected) {
  for (let waited = 0; openFdCount() !== expected && waited < 1000; waited += 20) await sleep(20)
  return openFdCount()
}

it('a big cached file to a reader that keeps pausing: every byte in order, progress rising to the size', async () => {
  const { client, peer } = await socketPair()
  const received = drain(peer)
  let sincePause = 0
  let pauses = 0
  peer.on('data', (chunk) => {
    sincePause += chunk.length
    if (sincePause < 8 * MiB) return
    sincePause = 0
    pauses++
    peer.pause()
    setTimeout(() => peer.resume(), 30)
  })
  const progress = []
  const result = await pipeFile(big.file, client, { onProgress: (n) => progress.push(n) })
  client.end()
  expect(result).toEqual({ bytes: SIZE, zeroCopy: zeroCopyAvailable })
  expect(await received).toEqual({ bytes: SIZE, sha256: sha256(big.data) })
  expect(pauses).toBeGreaterThanOrEqual(5)
  expect(progress.at(-1)).toBe(SIZE)
  expect(progress.every((n, i) => i === 0 || n > progress[i - 1])).toBe(true)
  peer.destroy()
})

describe('abort', () => {
  // `when` decides the moment: while the reader drains as fast as it can (a
  // pool job is sending, or waiting in the pool for room), or just after it
  // stopped reading (the job waits out its bounded poll, then the event loop waits).
  it.each([
    ['while the reader drains at full speed', async () => {}],
    ['just after the reader stopped reading', async (peer) => { peer.pause(); await sleep(2) }]
  ])('%s: AbortError at once, the connection closed, no descriptor left', async (_, when) => {
    const { client, peer } = await socketPair()
    const fds = openFdCount() // the two ends of the connection, nothing of the transfer's yet
    let bytes = 0
    const closed = new Promise((resolve) => peer.on('close', resolve))
    peer.on('error', () => {})
    const controller = new AbortController()
    let started
    const moving = new Promise((resolve) => { started = resolve })
    peer.on('data', (chunk) => {
      bytes += chunk.length
      if (bytes >= 16 * MiB) started()
    })
    const sending = pipeFile(big.file, client, { signal: controller.signal })
    await moving
    await when(peer)
    const aborted = performance.now()
    controller.abort()
    const err = await sending.catch((err) => err)
    // Bounded: a pool job ends within its budget; nothing waits for the reader.
    expect(performance.now() - aborted).toBeLessThan(500)
    expect(err.name).toBe('AbortError')
    expect(client.destroyed).toBe(true)
    peer.resume()
    await closed
    expect(bytes).toBeLessThan(SIZE)
    // The source file and the transfer's private duplicates are closed with the
    // connection (the source's close may come a moment after the rejection).
    expect(await fdCountSettled(fds - 2)).toBe(fds - 2)
  })
})

it('a reader that reads in short bursts never holds the only pool thread (UV_THREADPOOL_SIZE=1)', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [slowReaderChild], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    timeout: 60_000
  })
  const result = JSON.parse(stdout)
  // The reader took bytes in bursts throughout (the transfer was in flight)...
  expect(result.bursts).toBeGreaterThanOrEqual(4)
  expect(result.receivedWhileSlow).toBeGreaterThan(0)
  expect(result.receivedWhileSlow).toBeLessThan(result.size)
  // ...and fs calls on the one pool thread did not queue behind a transfer
  // waiting for its reader. A build whose job waits for the reader in the pool
  // (1 s waits) keeps stats stuck for 2 s of the 2.5 s; here a stat takes
  // microseconds. A loaded machine stalls stats too (1.4 s of the 2.5 s on
  // Node 26 at load 6-10): the bound is on the time stuck beyond what the same
  // stat loop lost with no transfer, just before (controlStuckMs).
  expect(result.statCount).toBeGreaterThan(50)
  expect(
    result.stuckMs,
    `slowest stat ${result.statMaxMs} ms, ${result.controlStuckMs} ms stuck without a transfer`
  ).toBeLessThan(result.controlStuckMs + result.slowMs * 0.4)
  expect(result.bytes).toBe(result.size)
  expect(result.received).toEqual({ bytes: result.size, sha256: result.sha256 })
})
