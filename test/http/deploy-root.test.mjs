// Deploy-style roots: the served root is a symlink (current → releases/42) that a
// deploy swaps to releases/43 by renaming a new symlink over it. New requests are
// served from the new release without a restart, a download in flight finishes
// with the old bytes, and once it is done no descriptor under releases/42 is left
// (proven with /proc/self/fd).

import http from 'node:http'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { link, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { OpenFileCache } from '../../lib/http/files/file-cache.js'
import { fdsUnder, listen, request } from '../support/http.mjs'

const BIG = 24 * 1024 * 1024

let base, current, old, next, bytes

beforeEach(async () => {
  base = realpathSync(await mkdtemp(join(tmpdir(), 'zcopy-deploy-')))
  current = join(base, 'current')
  old = join(base, 'releases/42')
  next = join(base, 'releases/43')
  bytes = { 42: randomBytes(BIG), 43: randomBytes(BIG) }
  for (const [release, dir] of [['42', old], ['43', next]]) {
    await mkdir(join(dir, 'assets'), { recursive: true })
    await writeFile(join(dir, 'big.bin'), bytes[release])
    await writeFile(join(dir, 'version.txt'), `release ${release}\n`)
    await writeFile(join(dir, 'assets/app.js'), `// app of ${release}\n`)
  }
  // The same file in both releases (a deploy that hard-links what did not change).
  await writeFile(join(old, 'same.txt'), 'unchanged\n')
  await writeFile(join(old, 'removed.txt'), 'gone in 43\n') // not requested again after the swap
  await link(join(old, 'same.txt'), join(next, 'same.txt'))
  await symlink('releases/42', current)
})

afterEach(async () => {
  await rm(base, { recursive: true, force: true })
})

async function swap () {
  await symlink('releases/43', join(base, 'current.new'))
  await rename(join(base, 'current.new'), current)
}

async function until (condition, ms = 3000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) return false
    await sleep(10)
  }
  return true
}

// Starts a download and pauses it after its first bytes: the server is mid-transfer.
async function startSlowDownload (port, path) {
  const req = http.get({ host: '127.0.0.1', port, path, agent: false })
  const [res] = await once(req, 'response')
  const chunks = []
  res.on('data', (chunk) => chunks.push(chunk))
  await once(res, 'data')
  res.pause()
  return {
    status: res.statusCode,
    finish () {
      const done = once(res, 'end').then(() => Buffer.concat(chunks))
      res.resume()
      return done
    }
  }
}

test('a symlink swap: new requests see the new release, the download in flight the old bytes, no old descriptor left', async () => {
  const middleware = zcopy.serveStatic(current)
  const server = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end('next') }))
  try {
    // Warm the cache with the old release: idle entries, and one shared file.
    for (const path of ['/version.txt', '/assets/app.js', '/same.txt', '/removed.txt']) {
      expect((await request(server.port, path)).status).toBe(200)
    }
    expect((await request(server.port, '/version.txt')).body.toString()).toBe('release 42\n')

    const download = await startSlowDownload(server.port, '/big.bin')
    expect(download.status).toBe(200)
    expect(fdsUnder(old).length).toBeGreaterThan(0)

    await swap()

    // No restart: the very next requests are served from releases/43.
    expect((await request(server.port, '/version.txt')).body.toString()).toBe('release 43\n')
    expect((await request(server.port, '/assets/app.js')).body.toString()).toBe('// app of 43\n')
    expect((await request(server.port, '/same.txt')).body.toString()).toBe('unchanged\n')
    const fresh = await request(server.port, '/big.bin')
    expect(fresh.status).toBe(200)
    expect(fresh.body.equals(bytes[43])).toBe(true)

    // The old download is still running, from the old file.
    expect(fdsUnder(old).length).toBeGreaterThan(0)
    const finished = await download.finish()
    expect(finished.length).toBe(BIG)
    expect(finished.equals(bytes[42])).toBe(true)

    // Done: nothing under releases/42 stays open (no close(), no sweep needed).
    expect(await until(() => fdsUnder(old).length === 0)).toBe(true)
    expect(fdsUnder(next).length).toBeGreaterThan(0) // the new release is cached
  } finally {
    await server.close()
    await middleware.close()
  }
  expect(fdsUnder(base)).toEqual([])
})

test('a swap seen only through cache hits (files identical in both releases) is caught by the sweep', async () => {
  const cache = new OpenFileCache({ sweepIntervalMs: 40 })
  const scope = cache.scope(current)
  const file = join(current, 'same.txt')
  const first = await cache.acquire(file, statSync(file), scope)
  cache.release(first)
  expect(fdsUnder(old).length).toBe(2) // the root directory and the file

  await swap()

  // Identical file: a hit, served from the old descriptor (the same bytes).
  const hit = cache.take(file, statSync(file), scope)
  expect(hit).toBe(first)
  cache.release(hit)

  // Kept busy (never idle), the entry is still dropped once a sweep sees the swap.
  let busy = true
  const keepBusy = (async () => {
    while (busy) {
      const entry = cache.take(file, statSync(file), scope)
      if (entry !== null) cache.release(entry)
      await sleep(5)
    }
  })()
  expect(await until(() => fdsUnder(old).length === 0, 2000)).toBe(true)
  busy = false
  await keepBusy
  expect(cache.take(file, statSync(file), scope)).toBe(null)
  const reopened = await cache.acquire(file, statSync(file), scope)
  cache.release(reopened)
  expect(fdsUnder(next).length).toBe(2)
  await cache.clear()
  expect(fdsUnder(base)).toEqual([])
})

test('a root that is a symlink to a single file follows the swap too', async () => {
  await symlink(join(old, 'version.txt'), join(base, 'version-link'))
  const middleware = zcopy.serveStatic(join(base, 'version-link'))
  const server = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end('next') }))
  try {
    expect((await request(server.port, '/')).status).toBe(404) // as serve-static: '/' asks for an index
    const app = await listen((req, res) => {
      req.originalUrl = '/version.txt'
      req.url = '/'
      middleware(req, res, () => { res.statusCode = 404; res.end('next') })
    })
    try {
      expect((await request(app.port, '/version.txt')).body.toString()).toBe('release 42\n')
      await symlink(join(next, 'version.txt'), join(base, 'version-link.new'))
      await rename(join(base, 'version-link.new'), join(base, 'version-link'))
      expect((await request(app.port, '/version.txt')).body.toString()).toBe('release 43\n')
      expect(await until(() => fdsUnder(old).length === 0)).toBe(true)
    } finally {
      await app.close()
    }
  } finally {
    await server.close()
    await middleware.close()
  }
})
