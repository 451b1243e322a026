// `npm install zcopy-0.1.0.tgz` as a user runs it (issue 65, item 8): the packed
// tarball installed from the npm registry into new projects, by npm with scripts
// allowed (then again from its lockfile), by npm with --ignore-scripts and by
// pnpm 10. Where a prebuild serves, zero-copy loads from prebuilds/ and no
// package manager mentions an install script or a build: zcopy has none, and
// no binding.gyp at its root (npm would add `node-gyp rebuild` for one, even
// with "gypfile": false on an install from the lockfile; pnpm would flag it).
// Then the documented build command, `npx zcopy build` in the project (npx runs
// the installed package's bin, `--no`: never one fetched from the registry),
// fetches its build-only tools, builds build/Release and zcopy loads that;
// without a compiler it says so in its last line and exits 1.
// Needs the registry (or npm's cache); the build needs Python 3, make and a C++
// compiler and skips without them. One to two minutes, half of it the build.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
import { repo } from '../support/pack.mjs'

const { buildTools } = createRequire(import.meta.url)('../../bin/lib/doctor/build-tools.js')

const run = promisify(execFile)
const child = fileURLToPath(new URL('./children/transfer.cjs', import.meta.url))
const served = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch)
const libc = fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc'
const tools = buildTools()
const canBuild = Boolean(tools.python3 && tools.make && tools.cxx)

// What a package manager prints about install scripts and builds it runs, skips or wants approved.
const SCRIPT_NOTICE = /install-scripts|allowScripts|install script|node-gyp|binding\.gyp|Ignored build scripts|approve-builds/i

// The environment of a user's shell: none of npm's own variables, which
// `npm test` would pass down (npm_config_*, npm_lifecycle_*...).
const ENV = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'ZCOPY_NATIVE'))

let work
let tarball
beforeAll(async () => {
  work = makeTempDir('zcopy-install-')
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: repo, env: ENV })
  tarball = path.join(work, JSON.parse(stdout)[0].filename)
}, 60_000)
afterAll(() => work && removeTempDir(work))

function project (name) {
  const dir = path.join(work, name)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `zcopy-${name}`, private: true }))
  return dir
}

async function install (dir, command, args) {
  const { stdout, stderr } = await run(command, args, { cwd: dir, env: ENV, timeout: 90_000, maxBuffer: 16 << 20 })
  return stdout + stderr
}

// The build command zcopy names (loadError, zcopy doctor), as a user types it.
const BUILD = ['--no', 'zcopy', 'build']

const npmInstall = (dir, ...args) => install(dir, 'npm', ['install', ...args, '--no-audit', '--no-fund'])

async function transfer (dir) {
  const script = path.join(dir, 'transfer.cjs')
  fs.copyFileSync(child, script)
  const { stdout } = await run(process.execPath, [script], { cwd: dir, env: ENV, timeout: 30_000 })
  return JSON.parse(stdout)
}

// `buildDir`: whether a build/ folder is there (a failed build leaves one with no binary).
function expectPrebuildZeroCopy (out, { buildDir = false } = {}) {
  expect(out.hasBuildDir).toBe(buildDir)
  expect(out.binary).toBe(path.join('prebuilds', `linux-${process.arch}`, `zcopy.${libc}.node`))
  expect(out.zeroCopyAvailable).toBe(true)
  expect(out.result).toEqual({ bytes: out.size, zeroCopy: true })
  expect(out.identical).toBe(true)
}

describe.runIf(served)(`the tarball on linux-${process.arch} (${libc}), where a prebuild serves`, () => {
  let npmProject

  it('npm install, scripts allowed: nothing said about install scripts, zero-copy from the prebuild; again from the lockfile', async () => {
    npmProject = project('npm')
    expect(await npmInstall(npmProject, tarball)).not.toMatch(SCRIPT_NOTICE)
    expectPrebuildZeroCopy(await transfer(npmProject))
    // A repeat install reads zcopy from node_modules and the lockfile, not the tarball.
    expect(await npmInstall(npmProject)).not.toMatch(SCRIPT_NOTICE)
    fs.rmSync(path.join(npmProject, 'node_modules'), { recursive: true })
    expect(await install(npmProject, 'npm', ['ci', '--no-audit', '--no-fund'])).not.toMatch(SCRIPT_NOTICE)
    expectPrebuildZeroCopy(await transfer(npmProject))
  }, 120_000)

  it('npm install --ignore-scripts: the same', async () => {
    const dir = project('npm-ignore-scripts')
    expect(await npmInstall(dir, tarball, '--ignore-scripts')).not.toMatch(SCRIPT_NOTICE)
    expectPrebuildZeroCopy(await transfer(dir))
  }, 90_000)

  it('pnpm 10 add: no build to approve, zero-copy from the prebuild', async (context) => {
    const dir = project('pnpm')
    let pnpm
    try {
      pnpm = (await run('npx', ['--yes', 'pnpm@10', '--version'], { cwd: dir, env: ENV, timeout: 60_000 })).stdout.trim()
    } catch (err) {
      context.skip(`pnpm 10 could not be fetched with npx (${String(err.message).split('\n')[0]})`)
    }
    expect(pnpm).toMatch(/^10\./)
    const output = await install(dir, 'npx', ['--yes', 'pnpm@10', 'add', tarball, '--store-dir', path.join(work, 'pnpm-store')])
    expect(output).not.toMatch(SCRIPT_NOTICE)
    expectPrebuildZeroCopy(await transfer(dir))
  }, 120_000)

  it.runIf(canBuild)('the build command zcopy names, npx zcopy build in the project: fetches node-gyp and node-addon-api, builds, and zcopy loads build/Release', async () => {
    const packageDir = path.join(npmProject, 'node_modules', 'zcopy')
    // Build-only packages are not installed with zcopy.
    for (const name of ['node-gyp', 'node-addon-api']) expect(fs.existsSync(path.join(npmProject, 'node_modules', name)), name).toBe(false)
    const { stderr } = await run('npx', BUILD, { cwd: npmProject, env: ENV, timeout: 240_000, maxBuffer: 64 << 20 })
    expect(stderr).toMatch(/^zcopy: fetching node-gyp@\S+ and node-addon-api@\S+ \(build-only\) with npm$/m)
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('zcopy: built build/Release/zcopy.node, which zcopy now loads; `npx zcopy doctor` checks zero-copy end to end')
    // The binding.gyp node-gyp needs is gone again: a later install must not see one.
    expect(fs.existsSync(path.join(packageDir, 'binding.gyp'))).toBe(false)
    const out = await transfer(npmProject)
    expect(out.binary).toBe(path.join('build', 'Release', 'zcopy.node'))
    expect(out.result).toEqual({ bytes: out.size, zeroCopy: true })
    expect(out.identical).toBe(true)
  }, 240_000)

  it.runIf(canBuild)('the build command without a compiler: node-gyp\'s output, then one line saying why, exit 1; the prebuild still serves', async () => {
    const packageDir = path.join(npmProject, 'node_modules', 'zcopy')
    const failed = await run('npx', BUILD, {
      cwd: npmProject, env: { ...ENV, CC: '/nonexistent/cc', CXX: '/nonexistent/c++' }, timeout: 120_000, maxBuffer: 64 << 20
    }).then(() => null, (err) => err)
    expect(failed.code).toBe(1)
    const last = failed.stderr.trimEnd().split('\n').at(-1)
    expect(last).toMatch(/^zcopy: the build failed \(no C\+\+ compiler; node-gyp exited with code 1\); building needs Python 3, make and a C\+\+17 compiler /)
    expect(last).toMatch(/zcopy keeps working: on a prebuild if one fits, else on streams$/)
    expect(fs.existsSync(path.join(packageDir, 'binding.gyp'))).toBe(false)
    expectPrebuildZeroCopy(await transfer(npmProject), { buildDir: true })
  }, 120_000)
})
