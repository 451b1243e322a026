// The published package, installed the way npm's script policy or
// `ignore-scripts=true` leave it: from the packed tarball, with --ignore-scripts
// and without the registry. The prebuild in the tarball must give zero-copy with no
// script run; ZCOPY_NATIVE=0 must give the stream fallback. (Installs with the
// registry, by npm and pnpm, and the build command: install.test.mjs.)
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { removeTempDir } from '../support/files.mjs'
import { packAndInstall } from '../support/pack.mjs'

const run = promisify(execFile)
const child = fileURLToPath(new URL('./children/transfer.cjs', import.meta.url))
const linux = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch)

let installed
let packageDir
beforeAll(async () => {
  installed = await packAndInstall()
  packageDir = path.join(installed.project, 'node_modules', 'zcopy')
}, 60_000)
afterAll(() => installed && removeTempDir(installed.project))

function environment (extra) {
  const env = { ...process.env, ...extra }
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key]
  return env
}

async function transfer (env) {
  const script = path.join(installed.project, 'transfer.cjs')
  fs.copyFileSync(child, script)
  const { stdout } = await run(process.execPath, [script], { cwd: installed.project, env: environment(env), timeout: 30_000 })
  return JSON.parse(stdout)
}

describe('the tarball', () => {
  it('holds the library, the CLI and the tools it shares with bench/, the sources and build script, the prebuilds and the docs the README links to, and nothing else', () => {
    const { files } = installed
    for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'lib/index.js', 'lib/index.d.ts',
      'bin/zcopy.js', 'tools/usage-error.js', 'zcopy.gyp', 'src/transfer.cc', 'scripts/build.js', 'scripts/gyp-file.js',
      'docs/http.md', 'docs/benchmarks.md', 'prebuilds/linux-x64/zcopy.glibc.node', 'prebuilds/linux-arm64/zcopy.glibc.node']) {
      expect(files).toContain(file)
    }
    const unexpected = files.filter((f) => !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|zcopy\.gyp|scripts\/(build|gyp-file)\.js|(lib|bin|tools|src|prebuilds)\/.+|docs\/[\w-]+\.md)$/.test(f))
    expect(unexpected).toEqual([])
    // No binding.gyp at the root (npm and pnpm would run or ask for a build:
    // scripts/gyp-file.js), no install script; the benchmark log is not for users.
    expect(files).not.toContain('binding.gyp')
    expect(files).not.toContain('docs/benchmarks-log.md')
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'))
    expect(manifest.scripts.install).toBeUndefined()
    // Build-only packages are fetched by scripts/build.js when it runs.
    expect(Object.keys(manifest.dependencies)).not.toContain('node-addon-api')
    expect(Object.keys(manifest.dependencies)).not.toContain('node-gyp')
    expect(files.filter((f) => /^(build|test|bench|\.github|\.ci)\//.test(f))).toEqual([])
    // The tarball's size (docs/install.md has today's figure): the four prebuilt
    // binaries about 1.2 MB unpacked of it (the native lane made each 60–90 kB
    // larger), the library, sources and docs the rest. Room for the docs to
    // grow, not for a stray fixture or build tree (a build/ alone is megabytes).
    expect(installed.size).toBeLessThan(1024 * 1024)
  })
})

describe.runIf(linux)('installed with --ignore-scripts', () => {
  it('loads the prebuild (no build/ directory) and sends a file to a loopback socket by zero-copy', async () => {
    const out = await transfer({ ZCOPY_NATIVE: undefined })
    expect(out.hasBuildDir).toBe(false)
    expect(out.binary).toBe(path.join('prebuilds', `linux-${process.arch}`, 'zcopy.glibc.node'))
    expect(out.zeroCopyAvailable).toBe(true)
    expect(out.result).toEqual({ bytes: out.size, zeroCopy: true })
    expect(out.identical).toBe(true)
  })

  it('with ZCOPY_NATIVE=0: the stream fallback, same bytes', async () => {
    const out = await transfer({ ZCOPY_NATIVE: '0' })
    expect(out.zeroCopyAvailable).toBe(false)
    expect(out.result).toEqual({ bytes: out.size, zeroCopy: false })
    expect(out.identical).toBe(true)
  })
})
