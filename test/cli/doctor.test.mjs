// `zcopy doctor`, the real CLI in child processes: with the addon (exit 0), with
// ZCOPY_NATIVE=0 (exit 1), and from a copy of the package whose addon was never
// built; --json and the human report. Every child sets ZCOPY_NATIVE itself, so
// the file passes in both runs of `npm test`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
import { LOADED_ADDON, NEUTRAL_ENV, copyPackage } from '../support/package-copy.mjs'
import { expectOneLineUsageError, runCli } from './cli.mjs'

const MiB = 1024 * 1024
const FEATURES = ['sendfile', 'copy_file_range', 'openat2', 'cachestat', 'preadv2_nowait']

let copy
let tmp
let runs
beforeAll(async () => {
  copy = copyPackage()
  // The doctors' temporary files go here, so that what they leave can be seen.
  // (Under os.tmpdir(): the kernel-feature probe runs on its filesystem.)
  tmp = makeTempDir('zcopy-doctor-test-')
  const NATIVE = { ...NEUTRAL_ENV, TMPDIR: tmp, UV_THREADPOOL_SIZE: undefined }
  const FALLBACK = { ...NEUTRAL_ENV, TMPDIR: tmp, ZCOPY_NATIVE: '0', UV_THREADPOOL_SIZE: '6' }
  const UNBUILT = { ...NEUTRAL_ENV, TMPDIR: tmp }
  const copyCli = path.join(copy, 'bin', 'zcopy.js')
  // Side by side: each takes about a second (its self-test).
  const [nativeJson, fallbackJson, nativeText, fallbackText, unbuiltJson, unbuiltText] = await Promise.all([
    runCli(['doctor', '--json'], { env: NATIVE }),
    runCli(['doctor', '--json'], { env: FALLBACK }),
    runCli(['doctor'], { env: NATIVE }),
    runCli(['doctor'], { env: FALLBACK }),
    runCli(['doctor', '--json'], { env: UNBUILT, cli: copyCli }),
    runCli(['doctor'], { env: { ...UNBUILT, PATH: '' }, cli: copyCli })
  ])
  runs = { nativeJson, fallbackJson, nativeText, fallbackText, unbuiltJson, unbuiltText }
}, 60_000)
afterAll(() => {
  removeTempDir(copy)
  removeTempDir(tmp)
})

function report (run) {
  expect(run.stderr).toBe('')
  return JSON.parse(run.stdout)
}

function expectEnvironment (json) {
  expect(json.zcopy).toMatch(/^\d+\.\d+\.\d+/)
  expect(json.node).toEqual({ version: process.version, napi: Number(process.versions.napi), abi: process.versions.modules })
  expect(json.platform).toBe(process.platform)
  expect(json.arch).toBe(process.arch)
  const glibc = process.report.getReport().header.glibcVersionRuntime
  expect(json.libc).toEqual(glibc ? { family: 'glibc', version: glibc } : { family: expect.anything(), version: null })
  expect(json.kernel).toBe(os.release())
}

function expectVerifiedSelfTest (selfTest, zeroCopy) {
  expect(selfTest).toEqual({
    path: zeroCopy ? 'sendfile' : 'stream',
    zeroCopy,
    verified: true,
    bytes: expect.any(Number),
    transfers: expect.any(Number),
    seconds: expect.any(Number),
    throughput: expect.any(Number),
    error: null
  })
  expect(selfTest.transfers).toBeGreaterThanOrEqual(1)
  expect(selfTest.bytes).toBe(selfTest.transfers * 8 * MiB)
  expect(selfTest.seconds).toBeGreaterThanOrEqual(1)
  expect(selfTest.seconds).toBeLessThan(3)
  expect(selfTest.throughput).toBeCloseTo(selfTest.bytes / selfTest.seconds, 0)
}

describe('zcopy doctor --json', () => {
  it('with the addon: exit 0, where it came from, every kernel feature present, zero-copy self-test', () => {
    const { code } = runs.nativeJson
    const json = report(runs.nativeJson)
    expect(Object.keys(json)).toEqual([
      'zcopy', 'node', 'platform', 'arch', 'libc', 'kernel', 'threadPool', 'addon', 'buildTools', 'features', 'selfTest', 'nativeLane', 'zeroCopy', 'advice'
    ])
    expectEnvironment(json)
    expect(json.threadPool).toEqual({ size: 4, source: 'default' })
    expect(json.addon).toEqual({ loaded: true, from: LOADED_ADDON.from, libc: LOADED_ADDON.libc, path: LOADED_ADDON.path, loadError: null })
    // This machine's kernel is 6.x: every feature zcopy relies on is there.
    expect(Object.keys(json.features)).toEqual(FEATURES)
    for (const name of FEATURES) expect(json.features[name], name).toEqual({ present: true, code: null })
    expectVerifiedSelfTest(json.selfTest, true)
    expect(json.zeroCopy).toBe(true)
    expect(json.advice).toBe(null)
    expect(code).toBe(0)
  })

  it('with ZCOPY_NATIVE=0: exit 1, ZCOPY_NATIVE_DISABLED, features unknown, the bytes moved by streams', () => {
    const { code } = runs.fallbackJson
    const json = report(runs.fallbackJson)
    expectEnvironment(json)
    expect(json.threadPool).toEqual({ size: 6, source: 'UV_THREADPOOL_SIZE' })
    expect(json.addon).toEqual({
      loaded: false,
      from: 'none',
      libc: null,
      path: null,
      loadError: { code: 'ZCOPY_NATIVE_DISABLED', message: expect.stringMatching(/ZCOPY_NATIVE=0/), cause: null }
    })
    for (const name of FEATURES) expect(json.features[name], name).toEqual({ present: null, code: null })
    expectVerifiedSelfTest(json.selfTest, false)
    expect(json.zeroCopy).toBe(false)
    expect(json.advice).toMatch(/ZCOPY_NATIVE=0 is set.*unset it/)
    expect(code).toBe(1)
  })

  it('an install whose addon was never built: exit 1, ZCOPY_NATIVE_NOT_FOUND, how to build it', () => {
    const { code } = runs.unbuiltJson
    const json = report(runs.unbuiltJson)
    expect(json.addon).toMatchObject({ loaded: false, from: 'none', path: null, loadError: { code: 'ZCOPY_NATIVE_NOT_FOUND' } })
    expect(json.addon.loadError.message).toMatch(/^No native build was found/)
    expectVerifiedSelfTest(json.selfTest, false)
    expect(json.advice).toMatch(/(build it with|then run): npx zcopy build$/)
    expect(code).toBe(1)
  })

  it('ZCOPY_PREBUILD pointing at a folder with no binary: the advice names it, not the build command', async () => {
    const empty = makeTempDir('zcopy-doctor-prebuild-')
    try {
      const run = await runCli(['doctor', '--json'], { env: { ...NEUTRAL_ENV, TMPDIR: tmp, ZCOPY_PREBUILD: empty } })
      const json = report(run)
      expect(json.addon.loadError.code).toBe('ZCOPY_NATIVE_NOT_FOUND')
      expect(json.advice).toBe(`ZCOPY_PREBUILD is set to ${empty}, which holds no zcopy binary for this system: ` +
        'unset it to use the prebuilt or built binary, or point it at a folder that holds one')
      expect(run.code).toBe(1)
    } finally {
      removeTempDir(empty)
    }
  }, 30_000)
})

describe('zcopy doctor (the report)', () => {
  const lines = (run) => run.stdout.trimEnd().split('\n')

  it('with the addon: one aligned line per subject, ✓ for each feature, "zero-copy works"', () => {
    const { code, stdout, stderr } = runs.nativeText
    expect(stderr).toBe('')
    expect(stdout).toMatch(/^zcopy \S+ doctor\n\n/)
    expect(stdout).toMatch(new RegExp(`^  Node\\.js +${process.version.replace(/\./g, '\\.')} \\(N-API \\d+, ABI \\d+\\)$`, 'm'))
    expect(stdout).toMatch(new RegExp(`^  platform +linux ${process.arch}`, 'm'))
    expect(stdout).toContain(`  kernel           ${os.release()}\n`)
    expect(stdout).toMatch(/^ {2}thread pool +4 threads \(libuv default\)$/m)
    const kind = LOADED_ADDON.libc ? `${LOADED_ADDON.from}, ${LOADED_ADDON.libc}` : LOADED_ADDON.from
    expect(stdout).toContain(`  native addon     ✓ loaded (${kind}): ${LOADED_ADDON.path}\n`)
    for (const label of ['sendfile', 'copy_file_range', 'openat2', 'cachestat', 'preadv2 RWF_NOWAIT']) {
      expect(stdout).toMatch(new RegExp(`^ +(kernel features +)?✓ ${label} `, 'm'))
    }
    expect(stdout).toMatch(/^ {2}self-test +✓ sendfile \(zero-copy\): .* over loopback TCP in \d\.\d s, [\d,.]+ MB\/s, every byte verified$/m)
    expect(lines(runs.nativeText).at(-1)).toBe('✓ zero-copy works')
    // Aligned: every value starts in the same column, after the longest label.
    for (const line of lines(runs.nativeText).slice(2, -2)) expect(line).toMatch(/^ {2}[\w. -]{15} {2}\S/)
    expect(code).toBe(0)
  })

  it('with ZCOPY_NATIVE=0: ✗ not loaded with the code, features unknown, streams, and why', () => {
    const { code, stdout, stderr } = runs.fallbackText
    expect(stderr).toBe('')
    expect(stdout).toMatch(/^ {2}native addon +✗ not loaded\n +ZCOPY_NATIVE_DISABLED: ZCOPY_NATIVE=0 is set/m)
    expect(stdout).toMatch(/^ {2}kernel features +\? unknown \(no addon\)$/m)
    expect(stdout).toMatch(/^ {2}thread pool +6 threads \(UV_THREADPOOL_SIZE=6\)$/m)
    expect(stdout).toMatch(/^ {2}self-test +✗ streams \(fallback\): .*every byte verified$/m)
    expect(lines(runs.fallbackText).at(-1)).toBe('✗ zero-copy is off: ZCOPY_NATIVE=0 is set, which forces the stream fallback: unset it to use sendfile')
    expect(code).toBe(1)
  })

  it('never built, and no compiler on PATH: says what to install and what to run', () => {
    const { code, stdout, stderr } = runs.unbuiltText
    expect(stderr).toBe('')
    expect(stdout).toMatch(/^ +ZCOPY_NATIVE_NOT_FOUND: No native build was found/m)
    expect(lines(runs.unbuiltText).at(-1)).toMatch(
      /^✗ zero-copy is off: .*lacks python3, make, a C\+\+ compiler .*then run: npx zcopy build$/)
    expect(code).toBe(1)
  })
})

describe('zcopy doctor usage', () => {
  it('--help documents --json and the exit codes', async () => {
    const { code, stdout } = await runCli(['doctor', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('--json')
    expect(stdout).toMatch(/Exit code 0 when zero-copy works, 1 when/)
  })

  it('zcopy --help lists it', async () => {
    const { stdout } = await runCli(['--help'])
    expect(stdout).toMatch(/zcopy doctor/)
  })

  it.each([
    [['doctor', 'now'], /Unknown argument: now/],
    [['doctor', '--verbose'], /Unknown argument: verbose/]
  ])('zcopy %j: one line, exit 2', async (args, pattern) => {
    expectOneLineUsageError(await runCli(args), pattern)
  })

  it('leaves no temporary files behind', () => {
    expect(fs.readdirSync(tmp)).toEqual([])
  })
})
