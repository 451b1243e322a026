// Bun, from the npm registry (the packages Bun's own installer uses), pinned by
// version and integrity and fetched once into node_modules/.cache by
// scripts/registry-fetch.js. The glibc build runs here as is; the musl build needs
// musl's dynamic loader (Debian's `musl` package) and, for Bun's own C++ runtime,
// Debian's libstdc++ and libgcc_s with a few glibc-only symbols supplied
// (test/fixtures/hosts/glibc-shim.c, built with the Zig that builds the musl prebuilds).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { makeTempDir, removeTempDir } from './files.mjs'

const require = createRequire(import.meta.url)
const { fetchPackage } = require('../../scripts/registry-fetch.js')
const { zig } = require('../../scripts/build-prebuilds.js')

// The glibc build is the one bench/http runs as a peer: one pin for both.
const { BUN_PACKAGE } = require('../../bench/http/bun.js')
const VERSION = BUN_PACKAGE.version
const BUN = {
  glibc: { name: BUN_PACKAGE.name, integrity: BUN_PACKAGE.integrity },
  musl: { name: '@oven/bun-linux-x64-musl', integrity: 'sha512-10QoW/YfTgnURaGEaHpJCiXjLI2e5iTtfVDaA5JKcyUzaa1cq6cVUY9/Uq5XkYzvtRjHLRe9Oj/lTDIQcxy8HQ==' }
}

export const MUSL_LOADER = '/lib/ld-musl-x86_64.so.1'
const GNU_LIBS = ['/usr/lib/x86_64-linux-gnu/libstdc++.so.6', '/usr/lib/x86_64-linux-gnu/libgcc_s.so.1']
  .map((file) => fs.existsSync(file) ? file : file.replace('/usr/lib/', '/lib/'))

export const canRunBun = process.platform === 'linux' && process.arch === 'x64'
export const canRunBunMusl = canRunBun && fs.existsSync(MUSL_LOADER) && GNU_LIBS.every((file) => fs.existsSync(file))

// → { bin, env, cleanup }: how to run that Bun, and what to call when done.
export function bun (libc) {
  const { name, integrity } = BUN[libc]
  const bin = path.join(fetchPackage({ name, version: VERSION, integrity, members: ['bin/bun'] }), 'bin', 'bun')
  if (libc === 'glibc') return { bin, env: {}, cleanup () {} }
  const libs = makeTempDir('zcopy-bun-musl-')
  for (const file of GNU_LIBS) fs.copyFileSync(file, path.join(libs, path.basename(file)))
  const shim = path.join(libs, 'ld-linux-x86-64.so.2')
  const source = new URL('../fixtures/hosts/glibc-shim.c', import.meta.url).pathname
  execFileSync(zig(), ['cc', '-target', 'x86_64-linux-musl', '-shared', '-fPIC', '-O2',
    source, '-Wl,-soname,ld-linux-x86-64.so.2', '-o', shim], { stdio: 'pipe' })
  return { bin, env: { LD_LIBRARY_PATH: libs }, cleanup: () => removeTempDir(libs) }
}
