import { afterEach, beforeEach, expect, test } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { groupGone, runCli, startCli } from './cli.mjs'

// bench/http/misses.js: two builds of zcopy serve, fresh every round, loaded on
// a tree of files they were never asked for, over loopback for real.
const MISSES = fileURLToPath(new URL('../../bench/http/misses.js', import.meta.url))
const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url))
const hasWrk = spawnSync('wrk', ['--version']).error === undefined

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-misses-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test.skipIf(!hasWrk)('alternating rounds of both builds, the ratios, nothing left behind', async () => {
  const cli = startCli(['--base', CHECKOUT, '--rounds', '2', '--seconds', '1', '--warm-up', '1'], { cli: MISSES, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true) // no zcopy serve or wrk left running
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const rounds = [...stdout.matchAll(/^round (\d)\/2: (\w+) [1-9]\d* req\/s, [1-9]\d* µs CPU\/request; (\w+) [1-9]\d* req\/s, [1-9]\d* µs CPU\/request$/gm)]
  expect(rounds.map((round) => round.slice(2).join(' '))).toEqual(['checkout base', 'base checkout'])
  expect(stdout).toMatch(/^files-5000, the first 1 s on a tree never asked for, 16 connections, 2 rounds: checkout ÷ base \d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\) the requests per second, \d+\.\d\d× \(.+\) the CPU per request$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // both trees removed
})

test('bad options and a --base with no addon: one line, exit code 2, nothing started', async () => {
  for (const args of [[], ['--base', CHECKOUT, '--rounds', '0'], ['--base', CHECKOUT, '--seconds', 'x'], ['--base', CHECKOUT, '--nope']]) {
    const { code, stdout, stderr } = await runCli(args, { cli: MISSES, env: { TMPDIR: tmpdir } })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^bench\/http\/misses\.js: (expected --base DIR |Unknown option)/)
  }
  const { code, stderr } = await runCli(['--base', tmpdir], { cli: MISSES, env: { TMPDIR: tmpdir } })
  expect(code).toBe(2)
  expect(stderr).toBe(hasWrk
    ? `--base ${tmpdir}: no zcopy addon loads from it (build it with npm run build; an older checkout, with binding.gyp at its root: npx node-gyp rebuild)\n`
    : 'wrk is not installed (apt-get install wrk): the trees are requested by its Lua script\n')
  expect(fs.readdirSync(tmpdir)).toEqual([])
})
