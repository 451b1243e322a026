import { afterEach, beforeEach, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, groupGone, runCli, startCli } from './cli.mjs'

// bench/http/run.js --tls --connections: every server over TLS 1.3 with one
// self-signed certificate, a column per connection count, loaded over loopback
// for real, briefly; and the ratios: the median of the per-round ratios with
// their spread.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-tls-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test('--tls --connections 1,4: HTTPS columns per count, ratios; nothing left behind', async () => {
  const cli = startCli(['--workers', '1', '--tls', '--cases', '4k', '--connections', '1,4', '--seconds', '1', '--rounds', '1'], { cli: RUN, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^load: (wrk -t1|autocannon) -c1\/4 over TLS 1\.3 \(one self-signed P-256 certificate\), /m)
  const table = stdout.slice(stdout.indexOf('| req/s'), stdout.indexOf('| server CPU'))
  expect(table).toMatch(/^\| req\/s, 1 round \| 4k c1 \| 4k c4 \|$/m)
  const rows = Object.fromEntries([...table.matchAll(/^\| (.+?) \| (.+?) \| (.+?) \|$/gm)].map(([, label, ...cells]) => [label, cells]))
  for (const cell of rows['zcopy serve']) expect(Number(cell.split(' ')[0].replace(/,/g, ''))).toBeGreaterThan(0)
  for (const cell of rows['zcopy ÷ sirv']) expect(cell).toMatch(/^\d+\.\d\d×$/)
  if (stdout.includes('nginx 1.')) for (const cell of rows['zcopy ÷ nginx']) expect(cell).toMatch(/^\d+\.\d\d×$/)
  expect(stdout).not.toMatch(/errors|\*$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // files, certificate and nginx's prefix removed
}, 120_000)

test('--connections that are no counts: one line, exit code 2', async () => {
  for (const value of ['0', 'many', '16,1.5']) {
    const result = await runCli(['--connections', value], { cli: RUN })
    expectOneLineUsageError(result, /--connections takes whole numbers from 1 \(one per load thread\) to 10000, not '(0|many|1\.5)'\n$/, 'bench/http/run.js')
  }
})

test('ratios are the median of the per-round ratios, with their min–max', async () => {
  const { printTables } = await import('../../bench/http/table.js')
  const run = (rate) => ({ rate, cpu: null, errors: 0 })
  // Per round: 100/50 = 2, 90/100 = 0.9, 300/100 = 3 → median 2 (the medians' ratio would be 100/100 = 1).
  const results = { '1m': { 'zcopy serve': [run(100), run(90), run(300)], nginx: [run(50), run(100), run(100)] } }
  const lines = []
  const log = console.log
  console.log = (line) => lines.push(line)
  try {
    printTables({ results, cases: ['1m'], kinds: ['zcopy serve', 'nginx'], rounds: 3 }, ['zcopy serve'])
  } finally {
    console.log = log
  }
  expect(lines.join('\n')).toMatch(/^\| zcopy ÷ nginx \| 2\.00× \(0\.90–3\.00\) \|$/m)
})

test("--servers 'zcopy serve --no-native-lane' with --tls: one line, exit code 2 (the lane is off there)", async () => {
  const result = await runCli(['--servers', 'zcopy serve,zcopy serve --no-native-lane', '--tls'], { cli: RUN, env: { TMPDIR: tmpdir } })
  expectOneLineUsageError(result, "--servers 'zcopy serve --no-native-lane' does not run with --tls (the lane is off there)", 'bench/http/run.js')
})
