import { spawnSync } from 'node:child_process'
import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, runCli } from './cli.mjs'

// bench/http/run.js's `compressed` case: a 212 KiB bundle asked for with a
// browser's Accept-Encoding, zcopy serve (compress on, no siblings) against
// nginx gzip_static and Caddy precompressed (compressed-servers.js, shared with
// compressed.js), in a table of its own. Briefly, when wrk is installed.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))
const require = createRequire(import.meta.url)
const { selectCases } = require('../../bench/http/cases.js')
const wrk = spawnSync('wrk', ['--version']).error === undefined

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-compressed-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test('in run.js\'s default cases, not in --sizes alone, unknown to the other tools', () => {
  expect(selectCases({}, { compressed: true }).at(-1)).toBe('compressed')
  expect(selectCases({ sizes: '4k' }, { compressed: true })).toEqual(['4k'])
  expect(selectCases({})).not.toContain('compressed')
  expect(() => selectCases({ cases: 'compressed' })).toThrow(/^unknown case compressed/)
})

test('--cases compressed with --tls or --workers: one line, exit code 2', async () => {
  for (const args of [['--tls'], ['--workers', '2']]) {
    const result = await runCli(['--cases', 'compressed', ...args], { cli: RUN, env: { TMPDIR: tmpdir } })
    expectOneLineUsageError(result, '--cases compressed runs neither with --tls nor with --workers', 'bench/http/run.js')
  }
})

test.runIf(wrk)('zcopy serve sends its br variant; a table of its own with the ratios', async () => {
  const { code, stdout, stderr } = await runCli(['--cases', 'compressed', '--seconds', '1', '--warm-up', '1', '--rounds', '1', '--connections', '2'],
    { cli: RUN, env: { TMPDIR: tmpdir } })
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^compressed: a 217088 B JavaScript bundle, Accept-Encoding: gzip, deflate, br; /m)
  expect(stdout).toMatch(/^round 1\/1 +compressed +zcopy serve +[\d,.]+ req\/s .*\[br \d+ B, variant after \d+ ms\]$/m)
  expect(stdout).toMatch(/^\| req\/s, 1 round \| compressed \|$/m)
  expect(stdout).toMatch(/^\| zcopy serve \| [\d,.]+ \|$/m)
  expect(stdout).toMatch(/^round 1\/1 +compressed +zcopy serve --no-native-lane +[\d,.]+ req\/s .*\[br \d+ B, variant after \d+ ms\]$/m)
  expect(stdout).toMatch(/^\| zcopy serve --no-native-lane \| [\d,.]+ \|$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([])
}, 90_000)
