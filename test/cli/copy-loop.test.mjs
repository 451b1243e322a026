import { afterEach, beforeEach, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from './cli.mjs'

// bench/copy-loop.js: one method's file copies in a row, for a whole-process
// timer to pair (docs/benchmarks.md). Checked end to end, not its time.
const COPY_LOOP = fileURLToPath(new URL('../../bench/copy-loop.js', import.meta.url))

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-copy-loop-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test.each(['zcopy', 'copyFile'])('%s: the copies run, exit code 0, the copy removed', async (method) => {
  const source = path.join(tmpdir, 'source')
  fs.writeFileSync(source, crypto.randomBytes(64 * 1024))
  const { code, stdout, stderr } = await runCli([method, '3', source], { cli: COPY_LOOP })
  expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: '', stderr: '' })
  expect(fs.readdirSync(tmpdir)).toEqual(['source'])
})

test('a source that is missing: the error, exit code 1', async () => {
  const { code, stderr } = await runCli(['zcopy', '1', path.join(tmpdir, 'missing')], { cli: COPY_LOOP })
  expect(code).toBe(1)
  expect(stderr).toMatch(/ENOENT/)
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test('bad arguments: the usage line, exit code 2', async () => {
  for (const args of [[], ['cp', '1', 'x'], ['zcopy', '0', 'x'], ['zcopy', 'many', 'x'], ['zcopy', '1']]) {
    const { code, stdout, stderr } = await runCli(args, { cli: COPY_LOOP })
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: 'bench/copy-loop.js: expected zcopy|copyFile COUNT SOURCE [DESTINATION] (--help: usage)\n' })
  }
})
