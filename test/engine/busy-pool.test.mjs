// When libuv's pool is busy with other transfers, a cached range goes on from
// the event loop (as nginx sends) instead of queueing behind them: the pool's
// threads are held (fs.open on a FIFO without a writer) and 16 transfers of a
// cached 1 MiB file start. The first 8 to need the pool wait for it; the other
// 8 complete from the event loop meanwhile. Once the pool is let go, every
// peer has every byte.
import { execFile } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { native, zeroCopyAvailable } from '../../lib/binding.js'

const child = fileURLToPath(new URL('./children/busy-pool.cjs', import.meta.url))
const cachestat = zeroCopyAvailable && native.probeKernel(os.tmpdir()).cachestat.present

describe.skipIf(!zeroCopyAvailable)('a transfer while the pool is busy with others', () => {
  it.skipIf(!cachestat)('goes on from the event loop when the range is cached', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [child], {
      env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
      timeout: 60_000
    })
    const { completedWhileHeld, bytes, received, expected } = JSON.parse(stdout)
    expect(completedWhileHeld).toBe(16 - 2 * 4)
    expect(bytes).toEqual(Array(16).fill(expected.bytes))
    expect(received).toEqual(Array(16).fill(expected))
  })
})
