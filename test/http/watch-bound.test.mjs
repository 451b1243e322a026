// inotify watches are a per-user budget: serveStatic watches at most
// `maxWatches` directories (default 1024), shares and releases them with the
// open-file cache, reports how many it holds, and past the bound checks files
// by a stat per request: every answer stays right, none is an error.
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { fdTable } from '../support/fd-table.cjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const FOLDERS = 60

let root
beforeAll(() => {
  root = makeTempDir('zcopy-watches-')
  for (let i = 0; i < FOLDERS; i++) {
    fs.mkdirSync(path.join(root, `d${i}`, 'deeper'), { recursive: true })
    fs.writeFileSync(path.join(root, `d${i}`, 'deeper', 'f.txt'), `file ${i}\n`)
  }
})
afterAll(() => removeTempDir(root))

// The inodes of the inotify watches this process holds, as the kernel lists them
// (one `inotify wd:HEX ino:HEX ...` line per watch), in hexadecimal.
function watchedInodes () {
  const inodes = []
  for (const [fd, target] of fdTable()) {
    if (target !== 'anon_inode:inotify') continue
    for (const line of fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n')) {
      const match = /^inotify wd:[0-9a-f]+ ino:([0-9a-f]+) /.exec(line)
      if (match) inodes.push(match[1])
    }
  }
  return inodes
}

function inotifyWatches () {
  return watchedInodes().length
}

function inodeOf (dir) {
  return fs.statSync(dir).ino.toString(16)
}

async function serving (options, run) {
  const serve = zcopy.serveStatic(root, options)
  const server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    await run(serve, (file) => request(server.port, file))
  } finally {
    await server.close()
    await serve.close()
  }
}

async function eventually (check, ms = 10_000) {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('past maxWatches, files are checked per request: at most that many watches, every answer right', async () => {
  const before = inotifyWatches()
  await serving({ maxWatches: 10 }, async (serve, get) => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < FOLDERS; i++) {
        const { status, body } = await get(`/d${i}/deeper/f.txt`)
        expect(status).toBe(200)
        expect(body.toString()).toBe(`file ${i}\n`)
      }
    }
    const stats = serve.stats()
    expect(stats.openFiles).toBeGreaterThan(0)
    expect(stats.watchedDirectories).toBeGreaterThan(0)
    expect(stats.watchedDirectories).toBeLessThanOrEqual(10)
    expect(inotifyWatches() - before).toBeLessThanOrEqual(10)

    // A file no watch vouches for is still seen to change at once (its stat).
    const last = path.join(root, `d${FOLDERS - 1}`, 'deeper', 'f.txt')
    fs.writeFileSync(last, 'changed, unwatched\n')
    expect((await get(`/d${FOLDERS - 1}/deeper/f.txt`)).body.toString()).toBe('changed, unwatched\n')
    // One a watch vouches for, once its event is read.
    fs.writeFileSync(path.join(root, 'd0', 'deeper', 'f.txt'), 'changed, watched\n')
    expect(await eventually(async () => (await get('/d0/deeper/f.txt')).body.toString() === 'changed, watched\n')).toBe(true)
  })
  expect(inotifyWatches()).toBe(before) // released with the cache
})

test('maxWatches: 0 watches nothing and still serves', async () => {
  const before = inotifyWatches()
  await serving({ maxWatches: 0 }, async (serve, get) => {
    for (let i = 0; i < 5; i++) expect((await get(`/d${i}/deeper/f.txt`)).status).toBe(200)
    expect(serve.stats().watchedDirectories).toBe(0)
    expect(inotifyWatches()).toBe(before)
  })
})

test('the default bound holds a whole small site: one watch per directory, shared', async () => {
  const before = inotifyWatches()
  await serving({}, async (serve, get) => {
    for (let i = 0; i < 20; i++) await get(`/d${i}/deeper/f.txt`)
    // The root, then two directories per file (the last ones set up just after
    // their response, off its path).
    expect(await eventually(() => serve.stats().watchedDirectories === 1 + 20 * 2)).toBe(true)
    expect(inotifyWatches() - before).toBe(1 + 20 * 2)
  })
})

// inotify reports every write to every entry of a watched directory: a busy log
// file beside the root would wake the server for each line it gets. The root's
// parent is watched only when the root is a symbolic link, which a deploy swaps
// there (likewise for a link further up the root's way: freshness.test.mjs).
test('the root\'s parent is watched only when the root is a symbolic link', async () => {
  const parent = path.dirname(root)
  const link = path.join(parent, `${path.basename(root)}-current`)
  fs.symlinkSync(root, link)
  try {
    for (const [served, watchesParent] of [[root, false], [link, true]]) {
      const serve = zcopy.serveStatic(served)
      const server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
      try {
        expect((await request(server.port, '/d2/deeper/f.txt')).body.toString()).toBe('file 2\n')
        expect(await eventually(() => serve.stats().watchedDirectories === (watchesParent ? 4 : 3))).toBe(true)
        expect(watchedInodes()).toContain(inodeOf(root))
        expect(watchedInodes().includes(inodeOf(parent))).toBe(watchesParent)
      } finally {
        await server.close()
        await serve.close()
      }
    }
  } finally {
    fs.unlinkSync(link)
  }
})

test('a bad maxWatches is a TypeError', () => {
  for (const [value, shown] of [[-1, '-1'], [1.5, '1.5'], ['10', "'10'"], [null, 'null']]) {
    expect(() => zcopy.serveStatic(root, { maxWatches: value })).toThrow(new TypeError(`options.maxWatches must be a non-negative integer, got ${shown}`))
  }
})
