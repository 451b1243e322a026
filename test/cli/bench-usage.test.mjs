// Every benchmark script a person runs answers --help with its usage (the
// comment at its top) and a bad option with one line and exit code 2: none
// starts a benchmark it was not asked for (compress-burst.js, compressed.js
// and compress-crawler.js ran one for any option) or writes a file named
// after the option (bundle.js), and none prints a stack trace (compare-builds.js).
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { expectOneLineUsageError, runCli } from './cli.mjs'

const SCRIPTS = [
  'bench/engine.js', 'bench/soak.js', 'bench/copy-loop.js', 'bench/http/run.js', 'bench/http/compare-builds.js',
  'bench/http/compress-burst.js', 'bench/http/compress-crawler.js', 'bench/http/compressed.js',
  'bench/http/instructions.js', 'bench/http/misses.js', 'bench/http/pipelined.js', 'bench/http/stalled.js',
  'bench/http/bundle.js'
]
const repo = fileURLToPath(new URL('../../', import.meta.url))

describe.each(SCRIPTS)('%s', (script) => {
  const cli = `${repo}${script}`

  test('--help: its usage on stdout, exit code 0', async () => {
    const { code, stdout, stderr } = await runCli(['--help'], { cli })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const first = fs.readFileSync(cli, 'utf8').split('\n').find((line) => line.startsWith('// ')).slice(3)
    expect(stdout.startsWith(first) || stdout.startsWith('usage:'), stdout.slice(0, 200)).toBe(true)
  }, 30_000)

  test('an unknown option: one line, exit code 2, nothing else done', async () => {
    const before = fs.readdirSync(repo)
    const result = await runCli(['--no-such-option'], { cli })
    expectOneLineUsageError(result, script === 'bench/copy-loop.js' ? /COUNT SOURCE/ : /--no-such-option/, script)
    expect(fs.readdirSync(repo)).toEqual(before)
  }, 30_000)
})
