// The read buffers kept between transfers of bodies sent through the response
// object (lib/http/chunk-spares.js): bounded, reused, and dropped once idle.

import { expect, test } from 'vitest'
import { ChunkSpares } from '../../lib/http/chunk-spares.js'

test('gives back the chunks it was given, up to its bound, and allocates beyond them', () => {
  const spares = new ChunkSpares({ chunkSize: 1024, max: 2, idleMs: 60_000 })
  const [a, b, c] = [spares.take(), spares.take(), spares.take()]
  expect(a.length).toBe(1024)
  expect(new Set([a, b, c]).size).toBe(3)
  spares.give(a)
  spares.give(b)
  spares.give(c) // beyond the bound: dropped
  expect(spares.count).toBe(2)
  expect([spares.take(), spares.take()].sort()).toEqual([a, b].sort())
  const fresh = spares.take()
  expect(fresh === a || fresh === b || fresh === c).toBe(false)
})

test('a sweep keeps the chunks while they are taken, drops them after a period without', () => {
  const spares = new ChunkSpares({ chunkSize: 1024, max: 4, idleMs: 60_000 })
  spares.give(spares.take())
  spares.give(spares.take())
  spares.sweep() // one was taken since the last sweep
  expect(spares.count).toBe(1)
  spares.sweep() // none was
  expect(spares.count).toBe(0)
})

test('the sweep runs by itself once chunks are kept, and the process can exit meanwhile', async () => {
  const spares = new ChunkSpares({ chunkSize: 1024, max: 4, idleMs: 20 })
  spares.give(Buffer.alloc(1024))
  expect(spares.sweeper.hasRef()).toBe(false)
  await expect.poll(() => spares.count, { timeout: 5000 }).toBe(0)
  expect(spares.sweeper).toBe(null)
})
