import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

// bench/http/nginx.js: the tuned nginx every benchmark table is anchored on. When
// it cannot start, the benchmark says why at once, and leaves nothing behind.
const { startNginx } = createRequire(import.meta.url)('../../bench/http/nginx.js')

let tmpdir
let saved
beforeEach(() => {
  tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-nginx-'))
  saved = { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR }
  process.env.TMPDIR = tmpdir // where startNginx makes its prefix
})
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  fs.rmSync(tmpdir, { recursive: true, force: true })
})

// nginx's prefix directories left in TMPDIR by this test's runs.
const prefixesLeft = () => fs.readdirSync(tmpdir).filter((name) => name.startsWith('zcopy-nginx-'))

test('not installed: rejects with what to install, no prefix left', async () => {
  process.env.PATH = path.join(tmpdir, 'empty')
  await expect(startNginx(tmpdir, 1)).rejects.toThrow('nginx is not installed (apt-get install nginx-light)')
  expect(prefixesLeft()).toEqual([])
})

// An nginx that exits at once (a configuration it refuses, a port it cannot
// bind) is reported as such, not after the 5 s wait for its port.
test('exits before listening: rejects with its exit code at once, no prefix left', async () => {
  const bin = path.join(tmpdir, 'bin')
  fs.mkdirSync(bin)
  fs.writeFileSync(path.join(bin, 'nginx'), '#!/bin/sh\nexit 3\n', { mode: 0o755 })
  process.env.PATH = bin
  const started = Date.now()
  await expect(startNginx(tmpdir, 1)).rejects.toThrow('nginx exited before listening (exit code 3)')
  expect(Date.now() - started).toBeLessThan(4000)
  expect(prefixesLeft()).toEqual([])
})
