// What a miss costs in thread-pool round trips once a site's directories are
// watched. They are counted with async_hooks (FSREQCALLBACK: fs.stat, fs.lstat,
// fs.open, fs.read ...; the addon's own jobs: ZcopyLookupBeneath,
// ZcopyOpenBeneath), around real requests to a real server. With the addon a
// miss below watched directories is one job: the name's stat, the root's name's
// stat and the open beneath the root, which also tells whether the name is a
// link; no second lookup of the name once the watches were set before the first
// one began and nothing changed since; a name that is no regular file is told
// as such by the same job. The rule itself
// (DirectoryWatches.quietSince) is checked on real inotify events.

import { createHook } from 'node:async_hooks'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { DirectoryWatches, tick } from '../../lib/http/files/dir-watches.js'
import { OpenFileCache } from '../../lib/http/files/file-cache.js'
import { ConfinedRoot } from '../../lib/http/files/open-confined.js'
import { fdsUnder, listen, request } from '../support/http.mjs'

const native = zcopy.zeroCopyAvailable
// A miss's lookup and open: one job with the addon; without it the name's stat,
// the root's name's stat and the open (fs.open, checked by /proc).
const MISS = native ? 1 : 3
// The lstat that tells whether the name is a link before it is remembered: the
// addon's open tells it (O_NOFOLLOW first) while the watches stayed quiet.
const LINK = native ? 0 : 1
// The body's read: the fallback sends it through the response.
const BODY = native ? 0 : 1
const POOL_JOBS = new Set(['FSREQCALLBACK', 'ZcopyLookupBeneath', 'ZcopyOpenBeneath'])

let root

beforeEach(async () => {
  root = fs.realpathSync(await mkdtemp(join(tmpdir(), 'zcopy-miss-lookups-')))
  fs.mkdirSync(join(root, 'd'))
  for (let i = 0; i < 10; i++) fs.writeFileSync(join(root, 'd', `f${i}.txt`), `file ${i}\n`)
})

afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

// → { stop(): the pool round trips made since start }.
function countFsRequests () {
  let count = 0
  const hook = createHook({ init (id, type) { if (POOL_JOBS.has(type)) count++ } }).enable()
  return { stop () { hook.disable(); return count } }
}

// The fs requests of one GET of `path`, checked for its bytes.
async function fsRequestsOf (port, path, body) {
  const counting = countFsRequests()
  const res = await request(port, path)
  const count = counting.stop()
  expect(res.status).toBe(200)
  expect(res.body.toString()).toBe(body)
  return count
}

test('a miss below watched directories looks its name up once; the path is then remembered', async () => {
  const middleware = zcopy.serveStatic(root, { memoryCache: 0 })
  const app = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    // The first file sets the watches on the root and d/, and is remembered.
    await fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n')
    await expect.poll(() => fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n'), { timeout: 5000, interval: 20 }).toBe(BODY)

    // A sibling: its lookup and open (and, without the addon, an lstat of its
    // name); not its name's second stat once its watches are set: they were set
    // before its lookup began.
    expect(await fsRequestsOf(app.port, '/d/f1.txt', 'file 1\n')).toBe(MISS + LINK + BODY)
    await expect.poll(() => fsRequestsOf(app.port, '/d/f1.txt', 'file 1\n'), { timeout: 5000, interval: 20 }).toBe(BODY)

    // Still follows the disk: a remembered file rewritten is sent anew.
    fs.writeFileSync(join(root, 'd', 'f1.txt'), 'file 1, again\n')
    await expect.poll(() => request(app.port, '/d/f1.txt').then((res) => res.body.toString()), { timeout: 5000, interval: 20 })
      .toBe('file 1, again\n')
  } finally {
    await app.close()
    await middleware.close()
  }
})

test('a miss for a name that is no regular file looks it up once: a FIFO is a 404, a directory a redirect', async () => {
  execFileSync('mkfifo', [join(root, 'd', 'fifo')])
  const middleware = zcopy.serveStatic(root, { memoryCache: 0 })
  const app = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  const jobsOf = async (path, status) => {
    const counting = countFsRequests()
    const res = await request(app.port, path)
    const count = counting.stop()
    expect(res.status).toBe(status)
    return count
  }
  try {
    // The root is opened, the watches set and the first file remembered.
    await fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n')
    await expect.poll(() => fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n'), { timeout: 5000, interval: 20 }).toBe(BODY)
    // Its lookup tells what the name is (the addon's job, or fs.stat), and
    // nothing else is asked of it.
    for (let i = 0; i < 3; i++) expect(await jobsOf('/d/fifo', 404)).toBe(1)
    // A directory: its lookup, then the proof that it is beneath the root before
    // the redirect (the stat of the root's name and the directory's open).
    for (let i = 0; i < 3; i++) expect(await jobsOf('/d', 301)).toBe(1 + 2)
  } finally {
    await app.close()
    await middleware.close()
  }
})

test('a name that is a symbolic link is never remembered, also below watched directories', async () => {
  fs.symlinkSync('f2.txt', join(root, 'd', 'link.txt'))
  const middleware = zcopy.serveStatic(root, { memoryCache: 0 })
  const app = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    await fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n')
    await expect.poll(() => fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n'), { timeout: 5000, interval: 20 }).toBe(BODY)
    // Its target's directory is watched, but a link retargeted elsewhere would not
    // be heard from there: every request looks the name up.
    for (let i = 0; i < 5; i++) {
      expect(await fsRequestsOf(app.port, '/d/link.txt', 'file 2\n')).toBeGreaterThan(BODY)
      await sleep(50)
    }
  } finally {
    await app.close()
    await middleware.close()
  }
})

test('a miss in a directory not watched yet looks its name up again once the watch is set', async () => {
  fs.mkdirSync(join(root, 'e'))
  fs.writeFileSync(join(root, 'e', 'g.txt'), 'g\n')
  const middleware = zcopy.serveStatic(root, { memoryCache: 0 })
  const app = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    await fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n')
    await expect.poll(() => fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n'), { timeout: 5000, interval: 20 }).toBe(BODY)
    // e/ is watched only for this request: its second lookup runs, and the lstat
    // of its name.
    const counting = countFsRequests()
    expect((await request(app.port, '/e/g.txt')).body.toString()).toBe('g\n')
    await expect.poll(() => middleware.stats().watchedDirectories, { timeout: 5000, interval: 10 }).toBe(3)
    await sleep(50) // the second lookup's answer
    expect(counting.stop()).toBe(MISS + 2 + BODY)
    await expect.poll(() => fsRequestsOf(app.port, '/e/g.txt', 'g\n'), { timeout: 5000, interval: 20 }).toBe(BODY)
  } finally {
    await app.close()
    await middleware.close()
  }
})

test('misses of one file at once keep one descriptor for it; misses of missing names and folders open nothing', async () => {
  const middleware = zcopy.serveStatic(root, { memoryCache: 0 })
  const app = await listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    await fsRequestsOf(app.port, '/d/f0.txt', 'file 0\n') // the root is opened
    const before = fdsUnder(root).length
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      request(app.port, ['/d/f5.txt', '/d/nothing.txt', '/d', '/d/f6.txt'][i % 4])))
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 6 }, () => [200, 404, 301, 200]).flat())
    for (const [i, res] of answers.entries()) {
      if (i % 4 === 0) expect(res.body.toString()).toBe('file 5\n')
      if (i % 4 === 3) expect(res.body.toString()).toBe('file 6\n')
    }
    expect(fdsUnder(root).length).toBe(before + 2) // f5.txt and f6.txt, once each
  } finally {
    await app.close()
    await middleware.close()
  }
  expect(fdsUnder(root)).toEqual([])
})

test.runIf(native)('lookups of one name begun at once open it once each, and the cache keeps one: the others are closed', async () => {
  const cache = new OpenFileCache()
  const scope = cache.scope(root)
  try {
    (await scope.use()).release() // the root is opened: lookups go to the addon from now on
    const file = join(root, 'd', 'f7.txt')
    const counting = countFsRequests()
    const stats = await Promise.all(Array.from({ length: 12 }, () => cache.statToOpen(file, scope)))
    expect(counting.stop()).toBe(12) // one job each: none was in the cache when it began
    expect(stats.every((stat) => stat.isFile() && stat.size === 'file 7\n'.length)).toBe(true)
    expect(cache.stats().openFiles).toBe(1)
    expect(fdsUnder(join(root, 'd'))).toHaveLength(1)
    const entry = cache.take(file, stats[0], scope)
    expect(entry).not.toBe(null) // the file the first lookup opened, a hit
    cache.release(entry)
    // Once it is in the cache, a lookup only stats it.
    const again = countFsRequests()
    expect((await cache.statToOpen(file, scope)).ino).toBe(stats[0].ino)
    expect(again.stop()).toBe(1)
    expect(fdsUnder(join(root, 'd'))).toHaveLength(1)
  } finally {
    await cache.clear()
  }
  expect(fdsUnder(root)).toEqual([])
})

test('misses at once share one stat of the root\'s name', async () => {
  const confined = new ConfinedRoot(root)
  try {
    (await confined.use()).release() // opens the root: its proof
    const counting = countFsRequests()
    const used = await Promise.all(Array.from({ length: 8 }, () => confined.use()))
    expect(counting.stop()).toBe(1)
    expect(new Set(used).size).toBe(1)
    for (const identity of used) identity.release()
    // One after the other: one stat each.
    const again = countFsRequests()
    for (let i = 0; i < 3; i++) (await confined.use()).release()
    expect(again.stop()).toBe(3)
  } finally {
    confined.close()
  }
})

test('quietSince: watched before the tick and no change heard since', async () => {
  const changes = []
  const watches = new DirectoryWatches((changed) => changes.push(changed))
  const d = join(root, 'd')
  const e = join(root, 'e')
  fs.mkdirSync(e)
  try {
    expect(watches.hold([d])).toBe(true)
    const afterD = tick()
    expect(watches.quietSince([d], afterD)).toBe(true)
    expect(watches.quietSince([d], afterD - 1)).toBe(false) // a lookup begun before the watch
    expect(watches.quietSince([d, e], afterD)).toBe(false) // e is not watched
    expect(watches.hold([e])).toBe(true)
    expect(watches.quietSince([d, e], afterD)).toBe(false) // e was watched after the tick
    expect(watches.quietSince([d, e], tick())).toBe(true)

    const beforeChange = tick()
    fs.writeFileSync(join(d, 'f3.txt'), 'changed\n')
    await expect.poll(() => changes.includes(join(d, 'f3.txt')), { timeout: 5000, interval: 10 }).toBe(true)
    expect(watches.quietSince([d], beforeChange)).toBe(false) // a change heard since
    expect(watches.quietSince([e], beforeChange)).toBe(true) // in another directory
    expect(watches.quietSince([d], tick())).toBe(true)

    // A watch closed and set again is a new watch.
    const beforeRewatch = tick()
    watches.release([e])
    expect(watches.hold([e])).toBe(true)
    expect(watches.quietSince([e], beforeRewatch)).toBe(false)
  } finally {
    watches.close()
  }
})
