import { spawnSync } from 'node:child_process'
import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from './cli.mjs'

// bench/http/run.js --bytes: runs ranked by MiB received per second (wrk's count
// of what it read, heads and bodies, whole or not) and CPU per MiB, for runs in
// which few responses complete. A real zcopy serve, loaded over loopback, briefly.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))
const wrk = spawnSync('wrk', ['--version']).error === undefined

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-bytes-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test.runIf(wrk)('--bytes: MiB/s received and CPU per MiB, in every line and table', async () => {
  const { code, stdout, stderr } = await runCli(['--servers', 'zcopy serve', '--cases', '1m', '--connections', '2', '--seconds', '1', '--rounds', '1', '--bytes'],
    { cli: RUN, env: { TMPDIR: tmpdir } })
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const round = /^round 1\/1 +1m +zcopy serve +([\d,.]+) MiB\/s +[\d,.]+ \([\d,.]+ \+ [\d,.]+\) µs CPU\/MiB/m.exec(stdout)
  expect(round).not.toBe(null)
  // Loopback moves far more than 1 MiB a second; no rate in requests a second.
  expect(Number(round[1].replace(/,/g, ''))).toBeGreaterThan(1)
  expect(stdout).toMatch(/^\| MiB\/s, 1 round \| 1m \|$/m)
  expect(stdout).toMatch(/^\| server CPU µs\/MiB, user \+ system \| 1m \|$/m)
  expect(stdout).not.toMatch(/req\/s|µs\/request/)
  expect(fs.readdirSync(tmpdir)).toEqual([])
}, 60_000)
