// The variants' folders do not outlive what made them: sendFile's stores (which
// no caller can close) remove their folder when the server they answered for
// closes (descriptors closed too) and when the process exits; a serveStatic
// middleware never closed removes its own at exit too. Each case runs in a child
// process that makes a variant on disk, checks it is there, then ends.

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

const LIB = fileURLToPath(new URL('../../lib/index.js', import.meta.url))

// The child: serves `big.js` from `root` with sendFile (or serveStatic) and
// `compress: { cacheDir }`, asks for it until a gzip variant comes, reports the
// folders in `cacheDir` and the descriptors open under it, then ends as `ending`
// says: 'exit' (process.exit(0) with the server still up), 'close' (the server
// closes, the process ends on its own when nothing is left).
const CHILD = `
const http = require('node:http')
const fs = require('node:fs')
const path = require('node:path')
const zcopy = require(process.env.LIB)
const { ROOT: root, CACHE: cacheDir, API: api, ENDING: ending } = process.env
const options = { root, compress: { cacheDir } }
const serve = api === 'serveStatic' ? zcopy.serveStatic(root, { compress: { cacheDir } }) : null
const server = http.createServer((req, res) => {
  if (serve !== null) return serve(req, res, () => { res.statusCode = 404; res.end() })
  zcopy.sendFile(req, res, req.url.slice(1), options).catch((err) => { res.statusCode = err.status || 500; res.end() })
})
function get (port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/big.js', headers: { 'accept-encoding': 'gzip' }, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.headers['content-encoding'] || 'identity'))
    }).on('error', reject)
  })
}
function fdsUnder (dir) {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try { return fs.readlinkSync('/proc/self/fd/' + fd).startsWith(dir) } catch { return false }
  })
}
function report (what) { process.stdout.write(JSON.stringify(what) + '\\n') }
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address()
  let encoding = 'identity'
  for (let i = 0; i < 400 && encoding !== 'gzip'; i++) {
    encoding = await get(port)
    if (encoding !== 'gzip') await new Promise((resolve) => setTimeout(resolve, 25))
  }
  const folders = fs.readdirSync(cacheDir)
  const files = folders.flatMap((folder) => fs.readdirSync(path.join(cacheDir, folder)))
  report({ encoding, folders, files, fds: fdsUnder(cacheDir).length })
  if (ending === 'exit') process.exit(0)
  server.close(() => setTimeout(() => {
    report({ afterClose: fs.readdirSync(cacheDir), fds: fdsUnder(cacheDir).length })
  }, 200))
  server.closeAllConnections()
})
`

function runChild (env) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', CHILD], { env: { ...process.env, LIB, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, lines: stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)), stderr })
    })
  })
}

// Text that compresses well, about 600 KiB (its gzip variant is above 64 KiB).
function text (size) {
  const words = Array.from({ length: 4096 }, (_, i) => `w${(i * 2654435761 >>> 0).toString(36)}`)
  const parts = []
  let state = 7
  let length = 0
  while (length < size) {
    state = (state * 1103515245 + 12345) >>> 0
    const word = `${words[(state >>> 8) % words.length]} `
    parts.push(word)
    length += word.length
  }
  return Buffer.from(parts.join('')).subarray(0, size)
}

let root, base
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-compress-life-'))
  base = `${root}-cache`
  await writeFile(join(root, 'big.js'), text(600 * 1024))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
  await rm(base, { recursive: true, force: true })
})

async function freshCache (name) {
  const cache = join(base, name)
  await mkdir(cache, { recursive: true })
  return cache
}

describe('sendFile({ compress }): the folder does not outlive the process', () => {
  test('process.exit() with the server still up: the folder is gone', async () => {
    const cache = await freshCache('exit')
    const { code, lines, stderr } = await runChild({ ROOT: root, CACHE: cache, API: 'sendFile', ENDING: 'exit' })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(lines[0].encoding).toBe('gzip')
    expect(lines[0].folders.length).toBe(1) // it was there, with the variant in it
    expect(lines[0].files.some((file) => file.endsWith('.gz'))).toBe(true)
    expect(await readdir(cache)).toEqual([])
  }, 40_000)

  test('the server closes: the folder is removed, its descriptors closed, and the process ends on its own', async () => {
    const cache = await freshCache('close')
    const { code, lines, stderr } = await runChild({ ROOT: root, CACHE: cache, API: 'sendFile', ENDING: 'close' })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(lines[0].encoding).toBe('gzip')
    expect(lines[0].folders.length).toBe(1)
    expect(lines[1]).toEqual({ afterClose: [], fds: 0 })
    expect(await readdir(cache)).toEqual([])
  }, 40_000)
})

describe('serveStatic({ compress }) never closed', () => {
  test('process.exit(): its folder is gone too', async () => {
    const cache = await freshCache('static')
    const { code, lines, stderr } = await runChild({ ROOT: root, CACHE: cache, API: 'serveStatic', ENDING: 'exit' })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(lines[0].encoding).toBe('gzip')
    expect(lines[0].folders.length).toBe(1)
    expect(await readdir(cache)).toEqual([])
  }, 40_000)
})
