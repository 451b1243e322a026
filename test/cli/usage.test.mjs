import { describe, expect, test } from 'vitest'
import { createRequire } from 'node:module'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expectOneLineUsageError, runCli } from './cli.mjs'

const { version } = createRequire(import.meta.url)('../../package.json')

describe('zcopy --help / --version', () => {
  test('--help lists both commands', async () => {
    const { code, stdout } = await runCli(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/zcopy bench/)
    expect(stdout).toMatch(/zcopy serve \[dir\]/)
  })

  test('bench --help documents every option', async () => {
    const { code, stdout } = await runCli(['bench', '--help'])
    expect(code).toBe(0)
    for (const option of ['--mode', '--sizes', '--duration', '--iterations', '--rounds', '--baseline', '--concurrency', '--json', '--markdown', '--svg']) {
      expect(stdout).toContain(option)
    }
  })

  test('serve --help documents --port and --host', async () => {
    const { code, stdout } = await runCli(['serve', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('--port')
    expect(stdout).toContain('--host')
  })

  test('--version prints the package version', async () => {
    const { code, stdout } = await runCli(['--version'])
    expect(code).toBe(0)
    expect(stdout.trim()).toBe(version)
  })
})

describe('bad input: one line on stderr, exit code 2', () => {
  test.each([
    [[], /choose a command/],
    [['copy'], /Unknown argument: copy/],
    [['bench', '--mode', 'disk'], /unknown --mode 'disk'/],
    [['bench', '--sizes', '12XB'], /invalid size '12XB'/],
    [['bench', '--sizes', '0'], /at least 1 byte/],
    [['bench', '--sizes', '4KiB,,1MiB'], /invalid size list/],
    [['bench', '--duration', '-1'], /--duration must be a positive number/],
    [['bench', '--duration', 'soon'], /--duration must be a positive number/],
    [['bench', '--iterations', '0'], /--iterations must be an integer/],
    [['bench', '--iterations', '2.5'], /--iterations must be an integer/],
    [['bench', '--concurrency', '-4'], /--concurrency must be an integer/],
    [['bench', '--rounds', '0'], /--rounds must be an integer from 1 to 100, got '0'/],
    [['bench', '--rounds', '2.5'], /--rounds must be an integer/],
    [['bench', '--baseline', 'cat'], /unknown --baseline 'cat' \(expected zcopy, stream, copyFile\)/],
    [['bench', '--baseline', 'copyFile'], /--baseline copyFile is not measured in --mode socket, http \(socket: zcopy, stream; http: zcopy, stream\)/],
    [['bench', '--mode', 'socket', '--baseline', 'copyFile'], /--baseline copyFile is not measured in --mode socket \(socket: zcopy, stream\)/],
    [['bench', '--duration', '1', '--iterations', '2'], /mutually exclusive/],
    [['bench', '--json', '--markdown'], /mutually exclusive/],
    [['bench', '--svg', '/no/such/folder/chart.svg'], /no such folder/],
    [['bench', '--frobnicate'], /Unknown argument: frobnicate/],
    [['serve', '/no/such/folder'], /no such folder: \/no\/such\/folder/],
    [['serve', '--port', '-1'], /--port must be an integer from 0 to 65535/],
    [['serve', '--port', '70000'], /--port must be an integer from 0 to 65535/],
    [['serve', '--port', 'http'], /--port must be an integer/],
    // issue 50, item 9
    [['serve', '--port='], /--port needs a value, got nothing/],
    [['serve', '--port', ''], /--port needs a value, got nothing/],
    [['bench', '--rounds='], /--rounds needs a value, got nothing/],
    [['bench', '--sizes', '-5KiB'], /--sizes: invalid size '-5KiB' \(a size cannot be negative\)/],
    [['bench', '--sizes', '4KiB,-1'], /--sizes: invalid size '-1' \(a size cannot be negative\)/],
    [['server', '.'], /unknown command 'server': did you mean serve\? \(see 'zcopy --help'\)/],
    [['bnech'], /unknown command 'bnech': did you mean bench\?/],
    // issue 65, item 11: a mistyped flag is named with the nearest known one
    [['serve', '.', '--singel'], /^zcopy: unknown flag --singel: did you mean --single\? \(see 'zcopy serve --help'\)$/m],
    [['serve', '.', '--max-agee', '3'], /^zcopy: unknown flag --max-agee: did you mean --max-age\? \(see/m],
    [['serve', '.', '--prot=3', '--frob'], /unknown flag --prot: did you mean --port\?; also unknown: frob \(see/],
    [['bench', '--jsn'], /unknown flag --jsn: did you mean --json\? \(see 'zcopy bench --help'\)/],
    [['help', 'copy'], /no help for 'copy': the commands are bench, serve, doctor, build/]
  ])('zcopy %j', async (args, pattern) => {
    expectOneLineUsageError(await runCli(args), pattern)
  })

  test('a file given as the folder to serve', async () => {
    const file = new URL(import.meta.url).pathname
    expectOneLineUsageError(await runCli(['serve', file]), /not a folder/)
  })
})

describe('a usage error names the help that lists the flags', () => {
  test.each([
    [['serve', '.', '--workers', 'abc'], "zcopy: --workers must be auto or an integer from 1 to 1024, got 'abc' (see 'zcopy serve --help')\n"],
    [['bench', '--mode', 'foo'], "zcopy: unknown --mode 'foo' (expected socket, http, file or all) (see 'zcopy bench --help')\n"],
    [[], "zcopy: choose a command: bench, serve, doctor or build (see 'zcopy --help')\n"]
  ])('zcopy %j', async (args, line) => {
    const { code, stdout, stderr } = await runCli(args)
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: line })
  })
})

// Issue 50, item 7: a --svg target that cannot be written is refused before the
// benchmark runs (which takes minutes), not after it with the results lost.
describe('bench --svg checks its target before the run', () => {
  test('a folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zcopy-svg-'))
    try {
      const started = Date.now()
      const result = await runCli(['bench', '--svg', dir])
      expectOneLineUsageError(result, /cannot write --svg .*: it is a folder \(give a file name, like .*bench\.svg\)/)
      expect(Date.now() - started).toBeLessThan(10_000) // the run would take ~20 s
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

// Issue 50, item 9: `zcopy help <command>` is `zcopy <command> --help`.
describe('zcopy help', () => {
  test.each([['serve'], ['bench'], ['doctor']])('zcopy help %s prints the command\'s help', async (command) => {
    const viaHelp = await runCli(['help', command])
    const viaFlag = await runCli([command, '--help'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stderr).toBe('')
    expect(viaHelp.stdout).toBe(viaFlag.stdout)
    expect(viaHelp.stdout.startsWith(`zcopy ${command}`)).toBe(true)
  })

  test('zcopy help alone is zcopy --help, which names it', async () => {
    const viaHelp = await runCli(['help'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toBe((await runCli(['--help'])).stdout)
    expect(viaHelp.stdout).toContain('zcopy help <command>')
  })
})

// Issue 50, item 8: at 80 columns (and 100) no help line is wider than the
// terminal and every example command is whole on one line, so copying that
// line runs the command shown.
describe('help layout', () => {
  const require = createRequire(import.meta.url)
  const examples = {
    bench: ['zcopy bench --mode socket --sizes 1GiB --iterations 5', 'zcopy bench --mode file --sizes 1MiB --rounds 9 --baseline copyFile', 'zcopy bench --json > results.json'],
    serve: require('../../bin/lib/serve/options.js').examples.map(([command]) => command.replace('$0', 'zcopy')),
    doctor: ['zcopy doctor --json']
  }

  test.each([
    [80, 'bench'], [80, 'serve'], [80, 'doctor'], [100, 'bench'], [100, 'serve']
  ])('COLUMNS=%i zcopy %s --help', async (columns, command) => {
    const { code, stdout } = await runCli([command, '--help'], { env: { COLUMNS: String(columns) } })
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    expect(lines.filter((line) => line.length > columns)).toEqual([])
    for (const example of examples[command]) {
      expect(lines.some((line) => line === `  ${example}` || line.startsWith(`  ${example}  `)), example).toBe(true)
    }
  })
})

// Issue 50, item 10: the benchmark scripts print their usage (the comment at
// their top) on --help instead of "Unknown option '--help'".
describe('benchmark scripts --help', () => {
  const run = promisify(execFile)
  test.each([['bench/http/run.js', /node bench\/http\/run\.js \[--seconds 5\]/], ['bench/engine.js', /node bench\/engine\.js \[--size 1GiB\]/]])('node %s --help', async (script, pattern) => {
    const file = fileURLToPath(new URL(`../../${script}`, import.meta.url))
    for (const flag of ['--help', '-h']) {
      const { stdout, stderr } = await run(process.execPath, [file, flag])
      expect(stderr).toBe('')
      expect(stdout).toMatch(pattern)
      expect(stdout).not.toMatch(/^\/\//m)
    }
  })
})
