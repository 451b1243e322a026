import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, groupGone, runCli, startCli } from './cli.mjs'

// bench/http/run.js --warm-up SECONDS: every case's load before its measured run
// lasts that long (a fresh server's first lookups out of the measurement), and
// the load line says so. A real zcopy serve, loaded over loopback, briefly.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-warm-up-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test('--warm-up 6: the 4 KiB case (1 s by default) loads the server for 6 s before its 1 s run', async () => {
  const started = Date.now()
  const cli = startCli(['--servers', 'zcopy serve', '--cases', '4k', '--warm-up', '6', '--seconds', '1', '--rounds', '1'], { cli: RUN, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  const elapsed = (Date.now() - started) / 1000
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^load: .+, 1s per run after a 6s warm-up, 1 round, /m)
  expect(stdout).toMatch(/^1 runs, about 1 min$/m)
  expect(elapsed).toBeGreaterThanOrEqual(7) // the default would take about 2 s
  expect(fs.readdirSync(tmpdir)).toEqual([])
}, 60_000)

test('without --warm-up, the load line names the many-files cases\' longer one', async () => {
  const { code, stdout } = await runCli(['--servers', 'zcopy serve', '--cases', 'files-100', '--seconds', '1', '--rounds', '1'], { cli: RUN, env: { TMPDIR: tmpdir } })
  expect(code).toBe(0)
  expect(stdout).toMatch(/^load: .+, 1s per run after a 1s warm-up \(3s for the many-files cases\), 1 round, /m)
}, 60_000)

test('--warm-up that is no whole number of seconds: one line, exit code 2', async () => {
  for (const value of ['0', '2.5', 'long']) {
    const result = await runCli(['--warm-up', value], { cli: RUN })
    expectOneLineUsageError(result, `--warm-up takes a whole number of seconds from 1, not '${value}'`, 'bench/http/run.js')
  }
})
