// The open-file cache's lifetime rules on real files and descriptors: idle
// entries close after one to two sweeps, entries in use or in recent use stay.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { OpenFileCache } from '../../lib/http/file-cache.js'
import { fdsUnder } from '../fixtures/http/net.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const SWEEP_MS = 50

let dir
beforeAll(() => { dir = makeTempDir() })
afterAll(() => removeTempDir(dir))

function fileIn (name) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, name)
  return file
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function acquire (cache, file) {
  return cache.acquire(file, fs.statSync(file))
}

test('an idle entry is closed after one to two sweep periods', async () => {
  const cache = new OpenFileCache({ sweepIntervalMs: SWEEP_MS })
  const file = fileIn('idle.txt')
  cache.release(await acquire(cache, file))
  expect(fdsUnder(file)).toHaveLength(1)
  await expect.poll(() => fdsUnder(file), { timeout: 10 * SWEEP_MS, interval: 10 }).toEqual([])
  await cache.clear()
})

test('an entry in use is never closed by a sweep, and closes once released and idle', async () => {
  const cache = new OpenFileCache({ sweepIntervalMs: SWEEP_MS })
  const file = fileIn('in-use.txt')
  const entry = await acquire(cache, file)
  await sleep(5 * SWEEP_MS)
  expect(fdsUnder(file)).toHaveLength(1)
  expect(fs.readFileSync(`/proc/self/fd/${entry.handle.fd}`, 'utf8')).toBe('in-use.txt')
  cache.release(entry)
  await expect.poll(() => fdsUnder(file), { timeout: 10 * SWEEP_MS, interval: 10 }).toEqual([])
  await cache.clear()
})

test('an entry used within every sweep period stays open, one descriptor for all uses', async () => {
  const cache = new OpenFileCache({ sweepIntervalMs: SWEEP_MS })
  const file = fileIn('busy.txt')
  for (let i = 0; i < 10; i++) {
    cache.release(await acquire(cache, file))
    await sleep(SWEEP_MS / 2)
  }
  expect(fdsUnder(file)).toHaveLength(1)
  await cache.clear()
  expect(fdsUnder(file)).toEqual([])
})
