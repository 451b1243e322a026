// The prebuilt binaries committed in prebuilds/ (and shipped in the tarball): the
// right ELF machine, nothing newer than glibc 2.28 and GCC 8's libstdc++ (Debian 11,
// Ubuntu 20.04, RHEL 8 and Node 20's own floor), and built from the sources in
// this checkout (prebuilds/manifest.json records a hash of them; after changing
// src/ or binding.gyp, run `npm run build:prebuilds`).
import crypto from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo } from '../support/pack.mjs'

const require = createRequire(import.meta.url)
const { readElf, newestNeeds, aboveFloor, FLOOR } = require('../../scripts/elf.js')
const { sourcesHash, TARGETS } = require('../../scripts/build-prebuilds.js')

const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'prebuilds', 'manifest.json'), 'utf8'))
const REBUILD = 'stale prebuild: run `npm run build:prebuilds` and commit prebuilds/'

it('the floor is glibc 2.28, GLIBCXX 3.4.25, CXXABI 1.3.11', () => {
  expect(FLOOR).toEqual({ GLIBC: '2.28', GLIBCXX: '3.4.25', CXXABI: '1.3.11' })
})

it('aboveFloor names what is too new: fstat@GLIBC_2.33, as the build before this check needed', () => {
  expect(aboveFloor({ 'libc.so.6': ['GLIBC_2.2.5', 'GLIBC_2.33', 'GLIBC_2.28'], 'libstdc++.so.6': ['GLIBCXX_3.4.21'] })).toEqual(['GLIBC_2.33'])
  expect(aboveFloor({ 'libstdc++.so.6': ['GLIBCXX_3.4.29', 'CXXABI_1.3.9'] })).toEqual(['GLIBCXX_3.4.29'])
  expect(aboveFloor({ 'libc.so.6': ['GLIBC_2.17', 'GLIBC_2.28'] })).toEqual([])
})

it.runIf(process.platform === 'linux')('readElf reads this Node binary: its machine, the glibc versions it needs', () => {
  const elf = readElf(fs.realpathSync(process.execPath))
  expect(elf.machine).toBe({ x64: 'x86_64', arm64: 'aarch64' }[process.arch])
  expect(elf.needed).toContain('libc.so.6')
  expect(elf.versions['libc.so.6'].length).toBeGreaterThan(0)
  expect(elf.versions['libc.so.6'].every((v) => v.startsWith('GLIBC_'))).toBe(true)
})

describe.each(Object.entries(TARGETS))('prebuilds/%s', (name, target) => {
  const file = `${name}/zcopy.glibc.node`
  const full = path.join(repo, 'prebuilds', file)

  it(`is an ${target.machine} shared object needing only libc and libstdc++, nothing above the floor`, () => {
    const elf = readElf(full)
    expect(elf.machine).toBe(target.machine)
    expect(elf.needed.sort()).toEqual(['libc.so.6', 'libstdc++.so.6'])
    expect(aboveFloor(elf.versions)).toEqual([])
    expect(newestNeeds(elf.versions).GLIBC).toBe('2.28')
  })

  it('is the binary the manifest records, built from the sources in this checkout', () => {
    const entry = manifest.prebuilds[file]
    expect(entry, `${file} missing from prebuilds/manifest.json`).toBeDefined()
    const bytes = fs.readFileSync(full)
    expect(crypto.createHash('sha256').update(bytes).digest('hex'), REBUILD).toBe(entry.sha256)
    expect(entry.sources, REBUILD).toBe(sourcesHash())
  })
})

it('only these prebuilds are committed', () => {
  const dirs = fs.readdirSync(path.join(repo, 'prebuilds'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)
  expect(dirs.sort()).toEqual(Object.keys(TARGETS).sort())
  for (const dir of dirs) expect(fs.readdirSync(path.join(repo, 'prebuilds', dir))).toEqual(['zcopy.glibc.node'])
  expect(Object.keys(manifest.prebuilds).sort()).toEqual(Object.keys(TARGETS).map((n) => `${n}/zcopy.glibc.node`).sort())
})
