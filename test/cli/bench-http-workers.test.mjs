import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, groupGone, runCli, startCli } from './cli.mjs'

// bench/http/run.js --workers N: zcopy serve (the real CLI) with N workers
// against sirv in a cluster and nginx (when installed) with as many, loaded
// over loopback for real, briefly.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-workers-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test('--workers 2: zcopy serve, sirv and nginx side by side, a table with ratios; nothing left behind', async () => {
  const cli = startCli(['--workers', '2', '--cases', '4k', '--seconds', '1', '--rounds', '1'], { cli: RUN, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true) // no worker, nginx or wrk left running
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^2 workers each: zcopy serve --workers 2 \(the CLI\), sirv in a node:cluster of 2, nginx worker_processes 2$/m)
  expect(stdout).toMatch(/^load: (wrk -t2|autocannon -w 2) -c16, /m)
  const table = stdout.slice(stdout.indexOf('| req/s'), stdout.indexOf('| server CPU'))
  const rows = Object.fromEntries([...table.matchAll(/^\| (.+?) \| (.+?) \|$/gm)].map(([, label, cell]) => [label, cell]))
  for (const kind of ['zcopy serve', 'sirv']) expect(Number(rows[kind].replace(/,/g, ''))).toBeGreaterThan(0)
  expect(stdout).toMatch(/^\| zcopy serve \| [\d.]+ \([\d.]+ \+ [\d.]+\) \|$/m) // the CPU table
  // The load generator's CPU while it loaded each server: something, not the whole machine.
  const client = stdout.slice(stdout.indexOf('| load generator CPU'))
  const clientCpu = /^\| zcopy serve \| ([\d,.]+) \([\d,.]+ \+ [\d,.]+\) \|$/m.exec(client)
  expect(clientCpu).not.toBe(null)
  expect(Number(clientCpu[1].replace(/,/g, ''))).toBeGreaterThan(0)
  expect(rows['zcopy ÷ sirv']).toMatch(/^\d+\.\d\d×$/)
  if (stdout.includes('nginx 1.')) expect(rows['zcopy ÷ nginx']).toMatch(/^\d+\.\d\d×$/)
  expect(stdout).not.toMatch(/errors|\*$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the served files and nginx's prefix removed
})

test('--workers that is no count: one line, exit code 2', async () => {
  for (const value of ['0', 'two', '1.5']) {
    const result = await runCli(['--workers', value], { cli: RUN })
    expectOneLineUsageError(result, `--workers takes a whole number from 1 to 16, not '${value}'`, 'bench/http/run.js')
  }
})
