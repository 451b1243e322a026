// The open-file cache's rules on real files and descriptors: a synchronous hit only
// for an open entry naming the same file, idle entries close after one to two
// sweeps, entries in use or in recent use stay.
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

test('take() hits only an open entry of the same file, and counts as a use', async () => {
  const cache = new OpenFileCache()
  const file = fileIn('take.txt')
  expect(cache.take(file, fs.statSync(file))).toBeNull() // not cached yet
  const opening = acquire(cache, file)
  expect(cache.take(file, fs.statSync(file))).toBeNull() // still opening
  const entry = await opening
  const hit = cache.take(file, fs.statSync(file))
  expect(hit).toBe(entry)
  expect(entry.users).toBe(2)
  cache.release(hit)
  cache.release(entry)

  fs.writeFileSync(file, 'take.txt, rewritten') // another size: another file version
  expect(cache.take(file, fs.statSync(file))).toBeNull()
  const fresh = await acquire(cache, file)
  expect(fresh).not.toBe(entry)
  expect(fs.readFileSync(`/proc/self/fd/${fresh.handle.fd}`, 'utf8')).toBe('take.txt, rewritten')
  cache.release(fresh)
  await expect.poll(() => fdsUnder(file)).toHaveLength(1) // the stale entry closes
  await cache.clear()
  expect(fdsUnder(file)).toEqual([])
})
