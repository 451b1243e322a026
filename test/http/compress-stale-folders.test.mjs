// The variants folders of servers that are gone (lib/http/compress/cache-dir.js)
// are removed at the next start whatever pid they carry: in a container the
// server is pid 1 on every start, and /tmp may outlive it. Liveness is a
// Unix socket the live server listens on in its folder (or, where that path
// is too long for sun_path, its pid, start time and boot id), never the pid
// alone. A clean stop leaves nothing.

import { spawn, spawnSync } from 'node:child_process'
import { existsSync, lstatSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rename, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'

const LIB = fileURLToPath(new URL('../../lib', import.meta.url))
const linux = process.platform === 'linux'
// `unshare -fp` (root, or user namespaces): the server as pid 1, as in a container.
const pidNamespaces = linux && spawnSync('unshare', ['-fp', 'true']).status === 0

// A server: a store on ROOT with its variants in BASE; prints its folder once
// made, and stops cleanly (close(), then exit) on SIGTERM.
const SERVER = `
const { serveStatic } = require(process.env.LIB)
const serve = serveStatic(process.env.ROOT, { compress: { cacheDir: process.env.BASE } })
serve.compressedFolder().then((folder) => process.stdout.write(folder + '\\n'))
process.on('SIGTERM', () => serve.close().then(() => process.exit(0)))
setInterval(() => {}, 1000)
`

let dir, root
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zcopy-stale-folders-'))
  root = join(dir, 'public')
  await mkdir(root)
  await writeFile(join(root, 'a.js'), 'const answer = 42;\n'.repeat(500))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

// Starts a server (`prefix`: a command it runs under, `unshare -fp`) → { child, folder }.
async function start (base, prefix = []) {
  const [command, ...rest] = [...prefix, process.execPath, '-e', SERVER]
  const child = spawn(command, rest, { env: { ...process.env, LIB, ROOT: root, BASE: base }, stdio: ['ignore', 'pipe', 'inherit'] })
  const folder = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(String(chunk).trim()))
    child.once('exit', () => reject(new Error('the server exited before making its folder')))
  })
  return { child, folder }
}

function exited (child) {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve))
}

async function kill (child) {
  child.kill('SIGKILL')
  await exited(child)
}

// A store of this process's in `base`: its folder is made, after the sweep.
async function sweep (base) {
  const serve = zcopy.serveStatic(root, { compress: { cacheDir: base } })
  const folder = await serve.compressedFolder()
  return { serve, folder }
}

test('a killed server\'s folder goes even when its pid is alive (reused); a live server\'s stays', async () => {
  const base = join(dir, 'reused')
  const dead = await start(base)
  expect(lstatSync(join(dead.folder, 's')).isSocket()).toBe(true)
  await kill(dead.child)
  // The pid in its name is now a live process's: this one's (a container's pid 1 after a restart).
  const reused = join(base, `v-${process.pid}-0123456789ab`)
  await rename(dead.folder, reused)
  const alive = await start(base)
  const { serve, folder } = await sweep(base)
  try {
    expect(existsSync(reused)).toBe(false)
    expect(existsSync(alive.folder)).toBe(true)
    expect((await readdir(base)).sort()).toEqual([folder, alive.folder].map((f) => f.slice(base.length + 1)).sort())
  } finally {
    await serve.close()
    await kill(alive.child)
  }
})

test('a folder with no socket: kept while it may be being made (changed within a minute), removed after', async () => {
  const base = join(dir, 'no-socket')
  await mkdir(base, { mode: 0o700 })
  const fresh = join(base, `v-${process.pid}-aaaaaaaaaaaa`)
  const old = join(base, `v-${process.pid}-bbbbbbbbbbbb`)
  for (const folder of [fresh, old]) await mkdir(folder, { mode: 0o700 })
  await writeFile(join(old, 'x.br'), 'left by a server killed long ago')
  const longAgo = new Date(Date.now() - 120_000)
  await utimes(old, longAgo, longAgo)
  const { serve } = await sweep(base)
  try {
    expect(existsSync(old)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
  } finally {
    await serve.close()
  }
})

test.runIf(linux)('a path too long for a Unix socket: pid, start time and boot id decide', async () => {
  const base = join(dir, 'x'.repeat(120))
  const dead = await start(base)
  const alive = await start(base)
  expect(existsSync(join(alive.folder, 's'))).toBe(false)
  expect(existsSync(join(alive.folder, 'owner'))).toBe(true)
  await kill(dead.child)
  const { serve } = await sweep(base)
  try {
    expect(existsSync(dead.folder)).toBe(false)
    expect(existsSync(alive.folder)).toBe(true)
  } finally {
    await serve.close()
    await kill(alive.child)
  }
})

// The server unshare runs (pid 1 inside), by its pid out here.
function inside (unshare) {
  return Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim())
}

// The container case itself: three servers, each pid 1 in a pid namespace of
// its own, SIGKILLed; a fourth sweeps their folders and, stopped cleanly,
// leaves nothing.
test.runIf(pidNamespaces)('servers killed as pid 1: the next one removes their folders; a clean stop leaves nothing', async () => {
  const base = join(dir, 'containers')
  const unshare = ['unshare', '-fp']
  for (let i = 0; i < 3; i++) {
    const { child, folder } = await start(base, unshare)
    expect(folder).toMatch(/\/v-1-[0-9a-f]+$/)
    process.kill(inside(child), 'SIGKILL') // unshare exits once its child is gone
    await exited(child)
  }
  const last = await start(base, unshare)
  expect(await readdir(base)).toEqual([last.folder.slice(base.length + 1)])
  process.kill(inside(last.child), 'SIGTERM')
  await exited(last.child)
  expect(await readdir(base)).toEqual([]) // (a cacheDir of the user's own stays; zcopy's default one goes once empty)
}, 60_000)
