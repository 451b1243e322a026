// The open-file cache closes an idle root's descriptor (no file proven against
// it is cached any more, while others keep the cache sweeping) and reopens it on
// the next request for a file below it, under a new proof of the same
// directory. The compressed variants made under the old proof stay good
// (sameProof() in lib/http/compress/variants.js: same device and inode): the
// first request after the reopen proves the root again (the file itself), a
// later one gets the variant, not made again. sendFile's one cache serves a
// root's file and, kept in use meanwhile, a file by absolute path (no root).
// Sweeps run every 100 ms here (10 s in the library).

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { readdirSync, readlinkSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fdsUnder, listen, request, untilCoded } from '../support/http.mjs'

const require = createRequire(import.meta.url)
const { OpenFileCache } = require('../../lib/http/files/file-cache.js')

const SWEEP_MS = 100
const startSweeping = OpenFileCache.prototype.startSweeping

let root, other, cacheDir, zcopy
const TEXT = Buffer.from(Array.from({ length: 6000 }, (_, i) => `const v${i} = ${(i * 2654435761) >>> 0};\n`).join(''))

beforeAll(async () => {
  OpenFileCache.prototype.startSweeping = function () {
    this.sweepIntervalMs = SWEEP_MS
    return startSweeping.call(this)
  }
  zcopy = require('../../lib/index.js') // sendFile's cache sweeps at SWEEP_MS
  root = await mkdtemp(join(tmpdir(), 'zcopy-idle-root-'))
  other = await mkdtemp(join(tmpdir(), 'zcopy-idle-other-'))
  cacheDir = `${root}-cache`
  await writeFile(join(root, 'app.js'), TEXT)
  await writeFile(join(other, 'keep.bin'), Buffer.alloc(1000, 1))
})

afterAll(async () => {
  OpenFileCache.prototype.startSweeping = startSweeping
  await rm(root, { recursive: true, force: true })
  await rm(other, { recursive: true, force: true })
  await rm(cacheDir, { recursive: true, force: true })
})

// The variant files in the cache folder: name → inode.
function variantFiles () {
  const files = {}
  for (const folder of readdirSync(cacheDir)) {
    for (const name of readdirSync(join(cacheDir, folder))) files[name] = statSync(join(cacheDir, folder, name)).ino
  }
  return files
}

test('a variant made before the root went idle is sent after the root is reopened', async () => {
  const options = { root, compress: { cacheDir } }
  const app = await listen((req, res) => {
    const answer = req.url === '/keep' ? zcopy.sendFile(req, res, join(other, 'keep.bin')) : zcopy.sendFile(req, res, 'app.js', options)
    answer.catch((err) => { res.statusCode = err.status || 500; res.end() })
  })
  const get = () => request(app.port, '/app.js', { headers: { 'accept-encoding': 'br' } })
  try {
    expect((await get()).headers['content-encoding']).toBeUndefined()
    const answer = await untilCoded(get, 'br') // sendFile's store is its own: poll the answers
    expect(answer.headers['content-encoding']).toBe('br')

    // Only the other file is asked for: app.js's descriptor is swept, then,
    // nothing cached being proven against it, the root's.
    let open = fdsUnder(root)
    for (let i = 0; i < 100 && open.length > 0; i++) {
      expect((await request(app.port, '/keep')).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, SWEEP_MS / 2))
      open = fdsUnder(root)
    }
    expect(open.map((fd) => readlinkSync(`/proc/self/fd/${fd}`))).toEqual([])

    // The first request proves the reopened root (the file itself is sent,
    // opened beneath it); the variant is kept, not made again: a later one
    // gets it, the same file in the cache folder. Asked until it does: a
    // sweep (every 100 ms here) between the two requests on a loaded machine
    // closes the root again, and the next request proves it anew (once in a
    // CI run of Node 24.21).
    const variantsBefore = variantFiles()
    expect((await get()).status).toBe(200)
    const after = await untilCoded(get, 'br')
    expect(after.headers['content-encoding']).toBe('br')
    expect(zlib.brotliDecompressSync(after.body).equals(TEXT)).toBe(true)
    expect(variantFiles()).toEqual(variantsBefore)
  } finally {
    await app.close()
  }
}, 90_000)
