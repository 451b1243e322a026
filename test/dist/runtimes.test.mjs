// zcopy under Bun (from the npm registry), glibc and musl builds. Bun loads
// Node-API addons but implements little of libuv: the addon's first call into its
// thread pool, uv_poll or uv_fs_fstat aborts the process ("unsupported uv
// function"). So under Bun zcopy must not load the addon and must fall back to
// streams, byte-exact. The musl build of Bun is also the one musl process the
// registry offers: it proves the musl prebuilds load under musl's loader and
// move bytes where no libuv is needed.
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { bun, canRunBun, canRunBunMusl, MUSL_LOADER } from '../support/bun.mjs'
import { repo } from '../support/pack.mjs'

const run = promisify(execFile)
const require = createRequire(import.meta.url)
const probe = (name) => path.join(repo, 'test', 'fixtures', 'hosts', name)
const cleanups = []
afterAll(() => cleanups.forEach((cleanup) => cleanup()))

async function runBun (libc, args, env = {}) {
  const runtime = bun(libc)
  cleanups.push(runtime.cleanup)
  const { ZCOPY_NATIVE, ...rest } = process.env
  const { stdout } = await run(runtime.bin, args, { env: { ...rest, ...runtime.env, ...env }, timeout: 60_000 })
  return JSON.parse(stdout.trim().split('\n').pop())
}

const FALLBACK = {
  zeroCopyAvailable: false,
  loadError: 'ZCOPY_UNSUPPORTED_RUNTIME',
  pipeFile: { bytes: 3 * 1024 * 1024 + 7, exact: true, zeroCopy: false },
  serveStatic: { status: 200, exact: true, range: 206, rangeExact: true }
}

describe.runIf(canRunBun)('Bun (glibc)', () => {
  it('require("zcopy") does not load the addon (Bun would abort), and pipeFile and serveStatic work on streams, byte-exact', async () => {
    expect(await runBun('glibc', [probe('serve-probe.cjs'), repo])).toEqual(FALLBACK)
  }, 120_000)
})

describe.runIf(canRunBunMusl)(`Bun (musl, ${MUSL_LOADER})`, () => {
  it('the same on musl, with node-gyp-build told the C library is musl', async () => {
    expect(await runBun('musl', [probe('serve-probe.cjs'), repo], { LIBC: 'musl' })).toEqual(FALLBACK)
  }, 180_000)

  it('prebuilds/linux-x64/zcopy.musl.node loads in a musl process: its kernel probe moves bytes by sendfile and copy_file_range, openBeneath opens below the root, byte-exact', async () => {
    const out = await runBun('musl', [probe('musl-addon-probe.cjs'), path.join(repo, 'prebuilds', 'linux-x64', 'zcopy.musl.node')])
    expect(out.exports).toEqual(Object.keys(require(path.join(repo, 'prebuilds', 'linux-x64', 'zcopy.glibc.node'))).sort())
    expect(out.exports).toContain('Transfer')
    for (const feature of ['sendfile', 'copy_file_range', 'openat2']) expect(out.kernel[feature]).toEqual({ present: true, code: null })
    expect(out.openBeneath).toEqual({ exact: true })
  }, 180_000)
})
