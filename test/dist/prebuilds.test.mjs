// The prebuilt binaries committed in prebuilds/ (and shipped in the tarball): the
// right ELF machine; for glibc nothing newer than glibc 2.28 and GCC 8's libstdc++
// (Debian 11, Ubuntu 20.04, RHEL 8 and Node 20's own floor), for musl (Alpine)
// musl's libc.so and nothing else (libc++ is linked in); and built from the
// sources in this checkout (prebuilds/manifest.json records a hash of them; after
// changing src/ or binding.gyp, run `npm run build:prebuilds`).
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo } from '../support/pack.mjs'

const require = createRequire(import.meta.url)
const { readElf, newestNeeds, aboveFloor, FLOOR } = require('../../scripts/elf.js')
const { sourcesHash, prebuildFile, TARGETS } = require('../../scripts/build-prebuilds.js')

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

describe.each(Object.keys(TARGETS).map((name) => [prebuildFile(name), TARGETS[name]]))('prebuilds/%s', (file, target) => {
  const full = path.join(repo, 'prebuilds', file)

  const needs = target.libc === 'musl'
    ? "musl's libc.so only (libc++ linked in), no glibc symbol versions"
    : 'only libc and libstdc++, nothing above the floor'
  it(`is an ${target.machine} shared object needing ${needs}`, () => {
    const elf = readElf(full)
    expect(elf.machine).toBe(target.machine)
    if (target.libc === 'musl') {
      expect(elf.needed).toEqual(['libc.so'])
      expect(elf.versions).toEqual({})
    } else {
      expect(elf.needed.sort()).toEqual(['libc.so.6', 'libstdc++.so.6'])
      expect(aboveFloor(elf.versions)).toEqual([])
      expect(newestNeeds(elf.versions).GLIBC).toBe('2.28')
    }
  })

  it('is the binary the manifest records, built from the sources in this checkout', () => {
    const entry = manifest.prebuilds[file]
    expect(entry, `${file} missing from prebuilds/manifest.json`).toBeDefined()
    const bytes = fs.readFileSync(full)
    expect(crypto.createHash('sha256').update(bytes).digest('hex'), REBUILD).toBe(entry.sha256)
    expect(entry.sources, REBUILD).toBe(sourcesHash())
  })
})

it('only these prebuilds are committed: glibc and musl for x64 and arm64', () => {
  const committed = fs.readdirSync(path.join(repo, 'prebuilds'), { withFileTypes: true }).filter((d) => d.isDirectory())
    .flatMap((d) => fs.readdirSync(path.join(repo, 'prebuilds', d.name)).map((f) => `${d.name}/${f}`))
  const expected = ['linux-arm64/zcopy.glibc.node', 'linux-arm64/zcopy.musl.node', 'linux-x64/zcopy.glibc.node', 'linux-x64/zcopy.musl.node']
  expect(committed.sort()).toEqual(expected)
  expect(Object.keys(TARGETS).map(prebuildFile).sort()).toEqual(expected)
  expect(Object.keys(manifest.prebuilds).sort()).toEqual(expected)
})

it.runIf(process.platform === 'linux' && process.arch === 'x64')('node-gyp-build picks the binary of the C library it is told of (LIBC, or /etc/alpine-release)', () => {
  const pick = (libc) => execFileSync(process.execPath, ['-p', "require('node-gyp-build').resolve(process.argv[1])", repo],
    { env: { ...process.env, LIBC: libc }, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' }).trim()
  expect(path.relative(repo, pick('musl'))).toBe(path.join('prebuilds', 'linux-x64', 'zcopy.musl.node'))
  expect(path.relative(repo, pick('glibc'))).toBe(path.join('prebuilds', 'linux-x64', 'zcopy.glibc.node'))
})
