// Stalled clients must not park libuv pool threads or spin the CPU.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const child = fileURLToPath(new URL('./children/stalled-pool.cjs', import.meta.url))

it('8 stalled transfers with UV_THREADPOOL_SIZE=4 leave the pool free and the CPU idle', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [child], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
    timeout: 50_000
  })
  const result = JSON.parse(stdout)
  // readFile completed while all eight were still waiting on their receivers...
  expect(result.stillStalled).toBe(8)
  // ...and promptly (the best of three, against scheduling noise on a busy machine).
  expect(Math.min(...result.readFileMs)).toBeLessThan(100)
  // Waiting for writability costs nothing: a busy-wait would burn ~1000 ms here.
  expect(result.cpuMsWhileStalled).toBeLessThan(100)
  expect(result.bytes).toEqual(Array(8).fill(result.size))
  expect(result.received).toEqual(Array(8).fill(result.size))
})
