// zcopy/fastify's `list: { extendedFolderInfo: true }` on trees that would make
// the walk endless or huge: symbolic link loops (`loop -> .`, `up -> ..`), a
// chain of folders deeper than the walk's depth bound, and links that fan out
// (2^19 paths through 20 folders). Each listing is answered, with `partial: true`
// where a bound cut the figures, and the server process lives on with the same
// descriptors. The server runs in a child process with a 96 MB heap: a walk that
// never ends takes it down (the test fails), never the test runner. On a normal
// tree the figures are @fastify/static's, asked of the peer the same way.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { MAX_DEPTH, MAX_ENTRIES } from '../../lib/adapters/fastify/folder-info.js'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const SERVER = fileURLToPath(new URL('./children/listing-server.mjs', import.meta.url))
const ANSWER_MS = 30_000 // a loaded 2-core machine answers the largest walk in ~0.5 s
const FAN = 20
const DEEP = MAX_DEPTH + 8

let root

function write (file, content) {
  mkdirSync(join(file, '..'), { recursive: true })
  writeFileSync(file, content)
}

beforeAll(() => {
  root = makeTempDir('zcopy-dir-list-bounds-')
  // loops/: two links to itself, and a subfolder with a link to its parent.
  write(join(root, 'loops', 'a.txt'), 'abc')
  write(join(root, 'loops', 'sub', 'file.txt'), 'hello')
  symlinkSync('.', join(root, 'loops', 'loop1'))
  symlinkSync('.', join(root, 'loops', 'loop2'))
  symlinkSync('..', join(root, 'loops', 'sub', 'up'))
  // deep/d1/d2/…/dDEEP/leaf.txt
  const chain = Array.from({ length: DEEP }, (_, i) => `d${i + 1}`)
  write(join(root, 'deep', ...chain, 'leaf.txt'), 'leaf')
  // fan/n0…n19, each n<i> holding a -> ../n<i+1> and b -> ../n<i+1>.
  for (let i = 0; i < FAN; i++) mkdirSync(join(root, 'fan', `n${i}`), { recursive: true })
  for (let i = 0; i < FAN - 1; i++) {
    symlinkSync(`../n${i + 1}`, join(root, 'fan', `n${i}`, 'a'))
    symlinkSync(`../n${i + 1}`, join(root, 'fan', `n${i}`, 'b'))
  }
  write(join(root, 'fan', `n${FAN - 1}`, 'f.txt'), 'f')
  // normal/: an ordinary tree, and a link to a folder in it.
  write(join(root, 'normal', 'x', '1.txt'), 'one')
  write(join(root, 'normal', 'x', 'y', '2.txt'), 'two!')
  write(join(root, 'normal', 'x', 'y', 'z', '3.txt'), 'three')
  mkdirSync(join(root, 'normal', 'empty'))
  write(join(root, 'normal', 'w', 'big.bin'), Buffer.alloc(70_000))
  symlinkSync('x/y', join(root, 'normal', 'link-to-y'))
  write(join(root, 'normal', 'top.txt'), 'top')
})

afterAll(() => removeTempDir(root))

// A listing server in a child process (`which`: 'zcopy' or 'peer').
async function startServer (which) {
  const child = fork(SERVER, [root, which], {
    execArgv: ['--max-old-space-size=96'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc']
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = once(child, 'exit')
  const [{ port }] = await once(child, 'message')
  return {
    port,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => stderr,
    fds: () => readdirSync(`/proc/${child.pid}/fd`).length,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) child.kill()
      await exited
    }
  }
}

// GET `path` → { status, json } or { error } (the connection failed: the server
// died) or { timedOut: true } after ANSWER_MS.
function list (port, path) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => {
        clearTimeout(timer)
        const body = Buffer.concat(chunks).toString()
        resolve({ status: res.statusCode, json: res.statusCode === 200 ? JSON.parse(body) : body })
      })
      res.on('error', (err) => resolve({ error: err.message }))
    })
    const timer = setTimeout(() => {
      req.destroy()
      resolve({ timedOut: true })
    }, ANSWER_MS)
    req.on('error', (err) => {
      clearTimeout(timer)
      resolve({ error: err.message })
    })
  })
}

// The extendedInfo of each listed folder, by name.
function infos (answer) {
  expect(answer).toMatchObject({ status: 200 })
  return Object.fromEntries(answer.json.dirs.map((dir) => [dir.name, dir.extendedInfo]))
}

// Polls until `condition()` holds, for up to 10 s.
async function until (condition) {
  const end = Date.now() + 10_000
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
  return condition()
}

describe('zcopy/fastify extendedFolderInfo on hostile trees (server in a child process)', () => {
  let server
  beforeAll(async () => { server = await startServer('zcopy') })
  afterAll(() => server.stop())

  test('link loops: counted as folders, never entered; the listing is answered and the process lives', async () => {
    const fdsBefore = server.fds()
    const answer = await list(server.port, '/loops/')
    expect(server.stderr()).toBe('')
    const info = infos(answer)
    expect(Object.keys(info)).toEqual(['loop1', 'loop2', 'sub'])
    // loop1 is loops/ itself: a.txt, sub/file.txt; folders loop1, loop2, sub, sub/up.
    for (const name of ['loop1', 'loop2']) {
      expect(info[name]).toMatchObject({ totalSize: 8, totalFileCount: 2, totalFolderCount: 4 })
      expect(info[name].partial).toBeUndefined()
    }
    // sub: file.txt, up (= loops/: a.txt; loop1, loop2 and sub itself not entered).
    expect(info.sub).toMatchObject({ totalSize: 8, totalFileCount: 2, totalFolderCount: 4 })
    expect(info.sub.partial).toBeUndefined()
    for (let i = 0; i < 5; i++) expect((await list(server.port, '/loops/')).status).toBe(200)
    expect(server.alive()).toBe(true)
    expect(await until(() => server.fds() <= fdsBefore)).toBe(true)
  }, 4 * ANSWER_MS)

  test(`a chain deeper than ${MAX_DEPTH} folders: the first ${MAX_DEPTH} entered, partial`, async () => {
    const info = infos(await list(server.port, '/deep/'))
    expect(info.d1).toMatchObject({ totalFolderCount: MAX_DEPTH, totalFileCount: 0, partial: true })
    expect(server.alive()).toBe(true)
  }, 2 * ANSWER_MS)

  test(`links fanning out to 2^${FAN - 1} paths: at most ${MAX_ENTRIES} entries looked up, partial`, async () => {
    const fdsBefore = server.fds()
    const info = infos(await list(server.port, '/fan/'))
    const looked = Object.values(info).reduce((sum, i) => sum + i.totalFileCount + i.totalFolderCount, 0)
    expect(looked).toBeGreaterThan(MAX_ENTRIES / 2)
    expect(looked).toBeLessThanOrEqual(MAX_ENTRIES)
    expect(info.n0.partial).toBe(true)
    expect(info[`n${FAN - 1}`].partial).toBe(true) // the budget was spent before it
    expect(server.alive()).toBe(true)
    expect((await list(server.port, '/loops/')).status).toBe(200)
    expect(await until(() => server.fds() <= fdsBefore)).toBe(true)
  }, 4 * ANSWER_MS)
})

test('on a normal tree (a link to a folder in it too) the figures are @fastify/static\'s', async () => {
  const ours = await startServer('zcopy')
  const peer = await startServer('peer')
  try {
    const expected = infos(await list(peer.port, '/normal/'))
    expect(expected.x).toMatchObject({ totalFileCount: 3, totalFolderCount: 2 })
    expect(infos(await list(ours.port, '/normal/'))).toEqual(expected)
  } finally {
    await Promise.all([ours.stop(), peer.stop()])
  }
}, 2 * ANSWER_MS)
