// zcopy.loadError says why the addon is not loaded, with a code, in each case;
// and lib/engine/binding.js knows which binary it loaded. Each case in a fresh process
// (the choice is made once, at require time), on a real copy of the package.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { removeTempDir } from '../support/files.mjs'
import { BUILT_ADDON, NEUTRAL_ENV, ROOT, addBinary, copyPackage } from '../support/package-copy.mjs'

const REPORT = `
  const binding = require(process.argv[1] + '/lib/engine/binding.js')
  const zcopy = require(process.argv[1])
  const e = zcopy.loadError
  console.log(JSON.stringify({
    available: zcopy.zeroCopyAvailable,
    same: e === binding.loadError,
    isError: e instanceof Error,
    code: e && e.code,
    message: e && e.message,
    cause: e && e.cause instanceof Error ? e.cause.message : null,
    binary: binding.binary
  }))
`

function loadIn (root, env = {}) {
  return JSON.parse(execFileSync(process.execPath, ['-e', REPORT, root], {
    env: { ...process.env, ...NEUTRAL_ENV, ...env },
    timeout: 60_000,
    killSignal: 'SIGKILL'
  }).toString())
}

const built = fs.existsSync(BUILT_ADDON)
const copies = []
function copy () {
  const root = copyPackage()
  copies.push(root)
  return root
}
afterAll(() => copies.forEach(removeTempDir))

describe('zcopy.loadError', () => {
  it('ZCOPY_NATIVE=0: ZCOPY_NATIVE_DISABLED, whatever binary there is', () => {
    expect(loadIn(ROOT, { ZCOPY_NATIVE: '0' })).toEqual({
      available: false,
      same: true,
      isError: true,
      code: 'ZCOPY_NATIVE_DISABLED',
      message: expect.stringMatching(/^ZCOPY_NATIVE=0 is set/),
      cause: null,
      binary: null
    })
  })

  it.skipIf(!built)('null when the addon is loaded (ZCOPY_NATIVE unset, or set to anything but 0)', () => {
    for (const value of [undefined, '', '1']) {
      expect(loadIn(ROOT, { ZCOPY_NATIVE: value })).toEqual({
        available: true,
        same: true,
        isError: false,
        code: null,
        message: null,
        cause: null,
        binary: { path: BUILT_ADDON, from: 'build' }
      })
    }
  })

  describe('on a copy of the package', () => {
    let bare
    beforeAll(() => { bare = copy() })

    it('no prebuild and no build: ZCOPY_NATIVE_NOT_FOUND, node-gyp-build\'s message kept, as cause too', () => {
      const result = loadIn(bare)
      expect(result).toMatchObject({ available: false, same: true, isError: true, code: 'ZCOPY_NATIVE_NOT_FOUND', binary: null })
      expect(result.message).toMatch(/^No native build was found for platform=linux arch=\w+ .*; loaded from: /)
      expect(result.message).toContain(bare)
      expect(result.message).toMatch(/; zcopy uses the stream fallback\. To build the addon for this system \(Python 3, make and a C\+\+17 compiler\): npx zcopy build$/)
      expect(result.message).not.toContain('\n')
      expect(result.cause).toMatch(/^No native build was found/)
    })

    it('a binary the loader refuses: Node\'s ERR_DLOPEN_FAILED, and which file it was', () => {
      const root = copy()
      const file = addBinary(root, 'build/Release/zcopy.node', Buffer.from('not an ELF file\n'))
      const result = loadIn(root)
      expect(result).toMatchObject({ available: false, isError: true, code: 'ERR_DLOPEN_FAILED', binary: { path: file, from: 'build' } })
      expect(result.message).toContain(file)
      expect(result.message).toMatch(/: npx zcopy build$/)
      expect(result.cause).toContain(file)
    })

    it.skipIf(!built)('a prebuild for this platform is loaded and said to be one', () => {
      const root = copy()
      const file = addBinary(root, `prebuilds/linux-${process.arch}/zcopy.napi.node`, BUILT_ADDON)
      expect(loadIn(root)).toMatchObject({ available: true, code: null, binary: { path: file, from: 'prebuild' } })
    })

    it('ZCOPY_NATIVE=0 wins over a missing binary', () => {
      expect(loadIn(bare, { ZCOPY_NATIVE: '0' })).toMatchObject({ code: 'ZCOPY_NATIVE_DISABLED', binary: null })
    })
  })

  it('not Linux: ZCOPY_UNSUPPORTED_PLATFORM, nothing loaded (even with ZCOPY_NATIVE=0)', () => {
    const code = `
      const { loadNative } = require(process.argv[1] + '/lib/engine/binding.js')
      const results = [{}, { ZCOPY_NATIVE: '0' }].map((env) => loadNative(undefined, { platform: 'darwin', env }))
      console.log(JSON.stringify(results.map(({ native, loadError, binary }) =>
        ({ native, code: loadError.code, message: loadError.message, binary }))))
    `
    const results = JSON.parse(execFileSync(process.execPath, ['-e', code, ROOT], { timeout: 60_000, killSignal: 'SIGKILL' }).toString())
    for (const result of results) {
      expect(result).toEqual({
        native: null,
        code: 'ZCOPY_UNSUPPORTED_PLATFORM',
        message: expect.stringMatching(/needs Linux.*on darwin/),
        binary: null
      })
    }
  })

  it('Bun (process.versions.bun): ZCOPY_UNSUPPORTED_RUNTIME, nothing loaded, the binary never opened', () => {
    const code = `
      const { loadNative } = require(process.argv[1] + '/lib/engine/binding.js')
      const { native, loadError, binary } = loadNative(undefined, { env: {}, versions: { ...process.versions, bun: '1.4.5' } })
      console.log(JSON.stringify({ native, code: loadError.code, message: loadError.message, binary,
        opened: Object.keys(require.cache).some((f) => f.endsWith('.node')) }))
    `
    // ZCOPY_NATIVE=0 keeps this process's own load (when binding.js is required) from opening the binary
    expect(JSON.parse(execFileSync(process.execPath, ['-e', code, ROOT], { env: { ...process.env, ZCOPY_NATIVE: '0' }, timeout: 60_000, killSignal: 'SIGKILL' }).toString())).toEqual({
      native: null,
      code: 'ZCOPY_UNSUPPORTED_RUNTIME',
      message: expect.stringMatching(/^Bun 1\.4\.5 does not implement the libuv functions/),
      binary: null,
      opened: false
    })
  })

  it('is a named ESM export', () => {
    const source = "import { loadError, zeroCopyAvailable } from 'zcopy'; console.log(JSON.stringify([loadError?.code ?? null, zeroCopyAvailable]))"
    const run = (env) => JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', source], {
      cwd: ROOT,
      env: { ...process.env, ...NEUTRAL_ENV, ...env },
      timeout: 60_000,
      killSignal: 'SIGKILL'
    }).toString())
    expect(run({ ZCOPY_NATIVE: '0' })).toEqual(['ZCOPY_NATIVE_DISABLED', false])
    if (built) expect(run({})).toEqual([null, true])
  })
})
