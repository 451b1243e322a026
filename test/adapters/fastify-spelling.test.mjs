// zcopy/fastify on a file system that folds case (macOS's and Windows' default;
// ext4 and tmpfs casefold directories): `/DEEP/x` opens `/deep/x`, and Fastify
// routes on the raw path, so an app's `/deep/*` guard would be passed. As
// @fastify/static, a path is served only as spelled on disk; another spelling
// is refused (403). The file system is a real FUSE mount that folds case
// (test/fixtures/casefold/casefold-fs.py, over a temporary folder).
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import zcopyFastify from 'zcopy/fastify'
import { request } from './helpers.mjs'

const FS = fileURLToPath(new URL('../fixtures/casefold/casefold-fs.py', import.meta.url))
const PYTHON = '/usr/bin/python3'
// Why the mount cannot be made here, or null.
const missing = !fs.existsSync('/dev/fuse')
  ? 'no /dev/fuse'
  : process.getuid?.() !== 0
    ? 'mounting needs root'
    : spawnSync(PYTHON, ['-c', 'import fusepy']).status !== 0
      ? 'no fusepy for /usr/bin/python3 (Debian: apt-get install python3-fusepy)'
      : null
if (missing) console.log(`fastify-spelling: skipped: ${missing}`)

const SECRET = 'guarded\n'
let backing, mount, daemon

beforeAll(async () => {
  if (missing) return
  backing = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-casefold-backing-'))
  mount = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-casefold-mount-'))
  fs.mkdirSync(path.join(backing, 'deep'))
  fs.writeFileSync(path.join(backing, 'deep', 'secret.txt'), SECRET)
  fs.writeFileSync(path.join(backing, 'deep', 'secret.txt.gz'), 'gzipped secret')
  fs.mkdirSync(path.join(backing, 'deep', 'sub'))
  fs.writeFileSync(path.join(backing, 'deep', 'sub', 'index.html'), SECRET)
  fs.writeFileSync(path.join(backing, 'open.txt'), 'open\n')
  daemon = spawn(PYTHON, [FS, backing, mount], { stdio: 'ignore' })
  for (let i = 0; i < 250 && !fs.existsSync(path.join(mount, 'open.txt')); i++) await sleep(20)
  expect(fs.readFileSync(path.join(mount, 'DEEP', 'SECRET.TXT'), 'utf8')).toBe(SECRET) // it folds case
})

afterAll(async () => {
  if (missing) return
  spawnSync('umount', ['-l', mount])
  daemon.kill()
  fs.rmSync(backing, { recursive: true, force: true })
  fs.rmdirSync(mount)
})

async function start (options, routes = () => {}) {
  const app = Fastify()
  app.all('/deep/*', async (request, reply) => reply.code(401).send('Unauthorized'))
  app.register(zcopyFastify, { root: mount, ...options })
  routes(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address()
  return { app, get: (url, headers) => request(port, url, { headers }) }
}

const ALIASES = ['/DEEP/secret.txt', '/Deep/secret.txt', '/dEEP/SECRET.TXT', '/DEEP/sub/', '/DEEP/sub/index.html', '/DEEP/sub']

describe.skipIf(missing)('a case-folding file system behind an app\'s /deep/* guard', () => {
  // The plain set-up takes zcopy's own path for URLs; preCompressed and
  // allowedPath take the adapter's; both must refuse.
  describe.each([
    ['no options', {}],
    ['preCompressed', { preCompressed: true }],
    ['allowedPath', { allowedPath: () => true }],
    ['redirect', { redirect: true }]
  ])('%s', (name, options) => {
    let app, get
    beforeAll(async () => { ({ app, get } = await start(options)) })
    afterAll(() => app.close())

    it('the guard holds, the exact spelling of an unguarded file is served', async () => {
      expect((await get('/deep/secret.txt')).status).toBe(401)
      const open = await get('/open.txt')
      expect([open.status, open.body.toString()]).toEqual([200, 'open\n'])
    })

    it.each(ALIASES)('%s: refused (403), never the guarded bytes', async (url) => {
      for (const headers of [{}, { 'accept-encoding': 'gzip' }]) {
        const res = await get(url, headers)
        expect(res.status).toBe(403)
        expect(res.body.toString()).not.toContain('secret')
        expect(res.body.toString()).not.toContain('guarded')
      }
    })

    it('another spelling of an unguarded file: refused as @fastify/static does', async () => {
      expect((await get('/OPEN.TXT')).status).toBe(403)
    })
  })

  it('reply.sendFile with allowedPath: another spelling is refused', async () => {
    const { app, get } = await start({ allowedPath: () => true, serve: false }, (a) => {
      a.get('/send/:name', (request, reply) => reply.sendFile(request.params.name))
    })
    try {
      expect((await get('/send/open.txt')).status).toBe(200)
      expect((await get('/send/OPEN.TXT')).status).toBe(403)
    } finally {
      await app.close()
    }
  })
})

// On a file system that keeps case apart, names that differ only in case are
// different files, each served under its own spelling.
describe('a case-sensitive file system', () => {
  let root, app, get
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-case-sensitive-'))
    fs.mkdirSync(path.join(root, 'docs'))
    fs.mkdirSync(path.join(root, 'DOCS'))
    fs.writeFileSync(path.join(root, 'docs', 'a.txt'), 'lower\n')
    fs.writeFileSync(path.join(root, 'DOCS', 'a.txt'), 'upper\n')
    fs.writeFileSync(path.join(root, 'Readme.txt'), 'Readme\n')
    fs.writeFileSync(path.join(root, 'README.TXT'), 'README\n')
    fs.writeFileSync(path.join(root, 'café.txt'.normalize('NFC')), 'nfc\n')
    app = Fastify()
    app.register(zcopyFastify, { root, preCompressed: true })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address()
    get = (url) => request(port, url)
  })
  afterAll(async () => {
    await app.close()
    fs.rmSync(root, { recursive: true, force: true })
  })

  it.each([
    ['/docs/a.txt', 200, 'lower\n'],
    ['/DOCS/a.txt', 200, 'upper\n'],
    ['/Readme.txt', 200, 'Readme\n'],
    ['/README.TXT', 200, 'README\n'],
    ['/readme.txt', 404, null],
    [`/${encodeURIComponent('café.txt'.normalize('NFC'))}`, 200, 'nfc\n'],
    [`/${encodeURIComponent('café.txt'.normalize('NFD'))}`, 404, null]
  ])('%s: %i', async (url, status, body) => {
    const res = await get(url)
    expect(res.status).toBe(status)
    if (body !== null) expect(res.body.toString()).toBe(body)
  })
})
