// The published package, installed the way npm's script policy or
// `ignore-scripts=true` leave it: from the packed tarball, with --ignore-scripts
// and without the registry. The prebuild in the tarball must give zero-copy with no
// install script run; ZCOPY_NATIVE=0 must give the stream fallback; the install
// script must do nothing when the prebuild loads and say in one line why there is
// no zero-copy when nothing loads and nothing builds.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
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
  it('holds the library, the CLI and the tools it shares with bench/, the sources, the prebuilds, the install script and the docs the README links to, and nothing else', () => {
    const { files } = installed
    for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'lib/index.js', 'lib/index.d.ts',
      'bin/zcopy.js', 'tools/usage-error.js', 'binding.gyp', 'src/transfer.cc', 'scripts/install.js', 'docs/http.md',
      'prebuilds/linux-x64/zcopy.glibc.node', 'prebuilds/linux-arm64/zcopy.glibc.node']) {
      expect(files).toContain(file)
    }
    const unexpected = files.filter((f) => !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|binding\.gyp|scripts\/install\.js|(lib|bin|tools|src|prebuilds)\/.+|docs\/[\w-]+\.md)$/.test(f))
    expect(unexpected).toEqual([])
    expect(files.filter((f) => /^(build|test|bench|\.github|\.ci)\//.test(f))).toEqual([])
    // The tarball's size (docs/install.md has today's figure): the four prebuilt
    // binaries about 900 KiB unpacked of it, the library, sources and docs the
    // rest. Room for the docs to grow, not for a stray fixture or build tree.
    expect(installed.size).toBeLessThan(768 * 1024)
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

  it('the install script does nothing when the prebuild loads', async () => {
    const { stdout, stderr } = await run(process.execPath, [path.join(packageDir, 'scripts', 'install.js')],
      { cwd: packageDir, env: environment({ ZCOPY_NATIVE: undefined }) })
    expect(stdout + stderr).toBe('')
    expect(fs.existsSync(path.join(packageDir, 'build'))).toBe(false)
  })

  it('the install script, when no binary loads and the build fails: one line saying why and what to do, exit 0', async () => {
    const empty = makeTempDir('zcopy-no-prebuild-')
    try {
      // node-gyp as it fails on a machine without Python.
      const nodeGyp = path.join(empty, 'node-gyp.js')
      fs.writeFileSync(nodeGyp, "console.error('gyp ERR! stack Error: Could not find any Python installation to use'); process.exit(1)\n")
      const { stderr } = await run(process.execPath, [path.join(packageDir, 'scripts', 'install.js')], {
        cwd: packageDir,
        // ZCOPY_PREBUILD: node-gyp-build looks for binaries there instead of in the package.
        env: environment({ ZCOPY_PREBUILD: empty, npm_config_node_gyp: nodeGyp, npm_config_build_from_source: undefined })
      })
      const lines = stderr.trim().split('\n')
      expect(lines[0]).toMatch(/Could not find any Python/)
      expect(lines.filter((l) => l.startsWith('zcopy:'))).toHaveLength(1)
      expect(lines.at(-1)).toMatch(new RegExp(`^zcopy: no native addon: no prebuilt binary for linux-${process.arch} \\(glibc\\), and the build from source failed \\(no Python 3; node-gyp exited with code 1\\); zcopy works without zero-copy, on streams`))
      expect(lines.at(-1)).toContain('npm rebuild zcopy')
    } finally {
      removeTempDir(empty)
    }
  })
})
