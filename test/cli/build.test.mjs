// `zcopy build` (issue 65, item 8): the build command loadError and zcopy doctor
// name, `npx zcopy build`, runs scripts/build.js of the package the CLI belongs
// to, its output and exit code passed through. Here on a copy of the package on
// a system with Python 3 and make but no C++ compiler on PATH (the build fails
// within a second); test/dist/install.test.mjs runs a whole build with it, from
// an installed tarball.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTools } from '../../bin/lib/doctor/build-tools.js'
import { makeTempDir, removeTempDir } from '../support/files.mjs'
import { NEUTRAL_ENV, ROOT, copyPackage } from '../support/package-copy.mjs'
import { expectOneLineUsageError, runCli } from './cli.mjs'

const tools = buildTools()
const canBuild = process.platform === 'linux' && Boolean(tools.python3 && tools.make)

// A compiler by any of the names make, gyp or node-gyp would call it.
const COMPILER = /^(g\+\+|gcc|c\+\+|cc|cpp|clang|c89|c99)(-[\d.]+)?$|-(g\+\+|gcc|c\+\+|cpp)(-[\d.]+)?$/

// A folder for PATH holding everything on PATH but the compilers (make's
// recipes need sh, printf, mkdir...); python3 is the interpreter itself (a
// pyenv shim would look for pyenv on PATH).
function pathWithoutCompilers (dir) {
  for (const from of process.env.PATH.split(path.delimiter)) {
    let names
    try {
      names = fs.readdirSync(from)
    } catch {
      continue
    }
    for (const name of names) {
      const link = path.join(dir, name)
      if (!COMPILER.test(name) && !fs.existsSync(link)) fs.symlinkSync(path.join(from, name), link)
    }
  }
  const python = execFileSync(tools.python3, ['-c', 'import sys; print(sys.executable)']).toString().trim()
  fs.rmSync(path.join(dir, 'python3'), { force: true })
  fs.symlinkSync(python, path.join(dir, 'python3'))
  return dir
}

describe('zcopy build', () => {
  it('zcopy --help lists it; its --help says when it is needed, what it needs and its exit codes', async () => {
    const top = await runCli(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/^ {2}zcopy build +Build the native addon from source/m)
    const own = await runCli(['build', '--help'])
    expect(own.code).toBe(0)
    expect(own.stdout).toContain('zcopy has no install script')
    expect(own.stdout).toMatch(/Needs Python 3,\s+make\s+and\s+a\s+C\+\+17\s+compiler/)
    expect(own.stdout).toMatch(/Exit\s+code\s+0\s+when\s+the\s+built\s+binary\s+loads,\s+1\s+when\s+the\s+build\s+failed/)
  })

  it('takes no arguments: one line, exit 2', async () => {
    expectOneLineUsageError(await runCli(['build', 'now']), /Unknown argument: now \(see 'zcopy build --help'\)/)
  })

  describe.runIf(canBuild)('on a copy of the package, no C++ compiler on PATH', () => {
    let copy
    let bin
    let viaCli
    let viaScript
    beforeAll(async () => {
      copy = copyPackage()
      for (const entry of ['scripts', 'src', 'zcopy.gyp']) fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true })
      bin = pathWithoutCompilers(makeTempDir('zcopy-build-path-'))
      const env = { ...NEUTRAL_ENV, PATH: bin, CC: undefined, CXX: undefined }
      viaCli = await runCli(['build'], { env, cli: path.join(copy, 'bin', 'zcopy.js') })
      viaScript = await runCli([], { env, cli: path.join(copy, 'scripts', 'build.js') })
    }, 60_000)
    afterAll(() => {
      if (copy) removeTempDir(copy)
      if (bin) removeTempDir(bin)
    })

    it("node-gyp's output, then one line saying why, exit 1: what scripts/build.js says and exits with", () => {
      const last = (run) => run.stderr.trimEnd().split('\n').at(-1)
      expect(viaCli.stderr).toMatch(/^gyp info it worked if it ends with ok$/m)
      expect(last(viaCli)).toMatch(/^zcopy: the build failed \(no C\+\+ compiler; node-gyp exited with code 1\); building needs Python 3, make and a C\+\+17 compiler /)
      expect(last(viaCli)).toMatch(/zcopy keeps working: on a prebuild if one fits, else on streams$/)
      expect({ code: viaCli.code, stdout: viaCli.stdout, last: last(viaCli) })
        .toEqual({ code: viaScript.code, stdout: viaScript.stdout, last: last(viaScript) })
      expect(viaCli.code).toBe(1)
    })

    it('builds in the package it belongs to, and leaves no binding.gyp there', () => {
      expect(viaCli.stderr).toContain(`gyp info spawn args '-Dmodule_root_dir=${copy}'`)
      expect(fs.existsSync(path.join(copy, 'binding.gyp'))).toBe(false)
      expect(fs.existsSync(path.join(copy, 'build', 'Release', 'zcopy.node'))).toBe(false)
    })
  })
})
