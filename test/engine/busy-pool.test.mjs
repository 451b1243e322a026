// When libuv's pool is busy with other transfers, a cached range goes on from
// the event loop (as nginx sends) instead of queueing behind them: the pool's
// threads are held (fs.open on a FIFO without a writer) and 16 transfers of a
// cached 1 MiB file start. The first 8 to need the pool wait for it; the other
// 8 go on from the event loop meanwhile. Once the pool is let go, every peer
// has every byte; peers that hang up mid-body fail only their own transfers,
// and no descriptor is left open.
import { execFile } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { native, zeroCopyAvailable } from '../../lib/engine/binding.js'

const child = fileURLToPath(new URL('./children/busy-pool.cjs', import.meta.url))
const cachestat = zeroCopyAvailable && native.probeKernel(os.tmpdir()).cachestat.present
const DISCONNECTS = ['EPIPE', 'ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']

async function run (...args) {
  const { stdout } = await promisify(execFile)(process.execPath, [child, ...args], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
    timeout: 60_000
  })
  return JSON.parse(stdout)
}

describe.skipIf(!zeroCopyAvailable)('a transfer while the pool is busy with others', () => {
  it.skipIf(!cachestat)('goes on from the event loop when the range is cached', async () => {
    const { completedWhileHeld, failedWhileHeld, leftOpen, bytes, received, expected } = await run()
    expect({ completedWhileHeld, failedWhileHeld }).toEqual({ completedWhileHeld: 16 - 2 * 4, failedWhileHeld: 0 })
    expect(bytes).toEqual(Array(16).fill(expected.bytes))
    expect(received).toEqual(Array(16).fill(expected))
    expect(leftOpen).toBe(0)
  })

  it.skipIf(!cachestat)('fails with the hang-up of a client that leaves mid-body, and leaks nothing', async () => {
    const { completedWhileHeld, failedWhileHeld, leftOpen, bytes } = await run('hangup')
    expect({ completedWhileHeld, failedWhileHeld }).toEqual({ completedWhileHeld: 0, failedWhileHeld: 16 - 2 * 4 })
    for (const outcome of bytes) {
      // Sent from the pool once it is free, a transfer may still be all out
      // before its peer hangs up.
      if (typeof outcome === 'number') expect(outcome).toBe(1024 * 1024)
      else expect(DISCONNECTS).toContain(outcome)
    }
    expect(leftOpen).toBe(0)
  })
})
