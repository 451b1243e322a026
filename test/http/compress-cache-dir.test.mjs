// The compressed variants' folder, shared by every store of this user: stores
// made while others close (and remove the base once it is empty) each get a
// private folder of their own, and none fails.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const require = createRequire(import.meta.url)
const { makeStoreDir, removeStoreDir } = require('../../lib/http/compress/cache-dir.js')

let dir
beforeAll(() => { dir = makeTempDir() })
afterAll(() => removeTempDir(dir))

test('stores made while others remove the emptied base: every one gets its folder', async () => {
  const base = path.join(dir, 'zcopy-variants')
  const failures = []
  async function lane () {
    for (let i = 0; i < 150; i++) {
      try {
        const store = await makeStoreDir(base)
        expect(fs.statSync(store.dir).mode & 0o777).toBe(0o700)
        await removeStoreDir(store.dir, true)
      } catch (err) {
        failures.push(err.code || err.message)
      }
    }
  }
  await Promise.all([lane(), lane(), lane(), lane()])
  expect(failures).toEqual([])
  expect(fs.existsSync(base)).toBe(false)
}, 60_000)
