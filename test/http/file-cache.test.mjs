// The open-file cache's rules on real files and descriptors: a synchronous hit only
// for an open entry naming the same file, idle entries close after one to two
// sweeps, entries in use or in recent use stay; only regular files are admitted, each
// for the scope (root identity) it was proven in.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { OpenFileCache } from '../../lib/http/files/file-cache.js'
import { fdsUnder } from '../support/http.mjs'
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
  expect(fs.readFileSync(`/proc/self/fd/${entry.fd}`, 'utf8')).toBe('in-use.txt')
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
  expect(fs.readFileSync(`/proc/self/fd/${fresh.fd}`, 'utf8')).toBe('take.txt, rewritten')
  cache.release(fresh)
  await expect.poll(() => fdsUnder(file)).toHaveLength(1) // the stale entry closes
  await cache.clear()
  expect(fdsUnder(file)).toEqual([])
})

test('a FIFO or a directory where a file was is refused at once (404), nothing left open', async () => {
  const cache = new OpenFileCache()
  const file = fileIn('soon-a-fifo.txt')
  const stat = fs.statSync(file) // the caller's stat saw a regular file…
  fs.rmSync(file)
  execFileSync('mkfifo', [file]) // …then a FIFO took its name: open(2) must not block
  for (const scope of [cache.scope(null), cache.scope(dir)]) {
    await expect(cache.acquire(file, stat, scope)).rejects.toMatchObject({ status: 404 })
    await expect(cache.acquire(dir, stat, scope)).rejects.toMatchObject({ status: 404 })
  }
  expect(fdsUnder(file)).toEqual([])
  await cache.clear()
  expect(fdsUnder(dir)).toEqual([])
})

test('an entry serves only the scope whose proof it was admitted on; the root directory is opened once, closed by clear()', async () => {
  const cache = new OpenFileCache()
  const file = fileIn('scoped.txt')
  const confined = cache.scope(dir)
  expect(cache.scope(dir)).toBe(confined)
  const entry = await cache.acquire(file, fs.statSync(file), confined)
  expect(entry.proof).toBe(confined.proof)
  cache.release(entry)
  expect(cache.take(file, fs.statSync(file), confined)).toBe(entry)
  cache.release(entry)
  expect(cache.take(file, fs.statSync(file), cache.scope(null))).toBeNull() // proven for another scope
  expect(fdsUnder(dir).filter((fd) => fs.readlinkSync(`/proc/self/fd/${fd}`) === dir)).toHaveLength(1) // the root, kept
  await cache.clear()
  expect(fdsUnder(dir)).toEqual([])

  // Usable again after clear(): a new root descriptor, a new proof, the old entry gone.
  const again = cache.scope(dir)
  expect(again).not.toBe(confined)
  const reopened = await cache.acquire(file, fs.statSync(file), again)
  expect(reopened).not.toBe(entry)
  expect(reopened.proof).not.toBe(entry.proof)
  cache.release(reopened)
  await cache.clear()
  expect(fdsUnder(dir)).toEqual([])
})

test('a root that is a symlink swapped to another directory: the next miss re-resolves it, entries of the old one are not used', async () => {
  const cache = new OpenFileCache()
  const releases = ['v1', 'v2'].map((name) => {
    fs.mkdirSync(path.join(dir, name))
    fs.writeFileSync(path.join(dir, name, 'page.txt'), `release ${name}`)
    return path.join(dir, name)
  })
  const root = path.join(dir, 'current')
  fs.symlinkSync(releases[0], root)
  const file = path.join(root, 'page.txt')
  const scope = cache.scope(root)
  const first = await cache.acquire(file, fs.statSync(file), scope)
  expect(fs.readFileSync(`/proc/self/fd/${first.fd}`, 'utf8')).toBe('release v1')
  cache.release(first)

  fs.symlinkSync(releases[1], root + '.tmp')
  fs.renameSync(root + '.tmp', root) // the deploy
  expect(cache.take(file, fs.statSync(file), scope)).toBeNull() // another file by its stat
  const second = await cache.acquire(file, fs.statSync(file), scope)
  expect(fs.readFileSync(`/proc/self/fd/${second.fd}`, 'utf8')).toBe('release v2')
  expect(second.proof).toBe(scope.proof)
  expect(first.proof).not.toBe(scope.proof) // the old root's proof is retired…
  await expect.poll(() => fdsUnder(releases[0])).toEqual([]) // …with its directory descriptor and its file
  cache.release(second)
  await cache.clear()
  expect(fdsUnder(dir)).toEqual([])
})

test('many caches on one server: one close listener, and every cache is cleared when it closes', async () => {
  const { default: http } = await import('node:http')
  const server = http.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const warnings = []
  const onWarning = (warning) => warnings.push(warning)
  process.on('warning', onWarning)
  try {
    const caches = Array.from({ length: 20 }, () => new OpenFileCache())
    const file = fileIn('shared.txt')
    for (const cache of caches) {
      cache.clearOnClose(server)
      cache.clearOnClose(server)
      cache.release(await acquire(cache, file))
    }
    expect(server.listenerCount('close')).toBe(1)
    expect(fdsUnder(file)).toHaveLength(20)
    await new Promise((resolve) => server.close(resolve))
    await Promise.all(caches.map((cache) => cache.clear()))
    expect(fdsUnder(file)).toEqual([])
    await sleep(10) // warnings are emitted on the next tick
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
  } finally {
    process.off('warning', onWarning)
  }
})

test('beyond max, an entry used again since the last eviction stays and the one used once goes', async () => {
  const cache = new OpenFileCache({ max: 2 })
  const [a, b, c] = ['keep-a.txt', 'drop-b.txt', 'new-c.txt'].map(fileIn)
  cache.release(await acquire(cache, a))
  cache.release(await acquire(cache, b))
  cache.release(cache.take(a, fs.statSync(a)))
  cache.release(await acquire(cache, c))
  await expect.poll(() => fdsUnder(b)).toEqual([])
  expect(fdsUnder(a)).toHaveLength(1)
  expect(fdsUnder(c)).toHaveLength(1)
  await cache.clear()
  expect(fdsUnder(dir)).toEqual([])
})

test('a server that listens again and closes again clears the cache again', async () => {
  const { default: http } = await import('node:http')
  const server = http.createServer()
  const cache = new OpenFileCache()
  const file = fileIn('relisten.txt')
  for (let round = 0; round < 2; round++) {
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    cache.clearOnClose(server)
    cache.release(await acquire(cache, file))
    expect(fdsUnder(file)).toHaveLength(1)
    await new Promise((resolve) => server.close(resolve))
    await expect.poll(() => fdsUnder(file)).toEqual([])
  }
  await cache.clear()
})
