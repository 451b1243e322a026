import { describe, expect, test } from 'vitest'
import { createRequire } from 'node:module'
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
    [['serve', '--port', 'http'], /--port must be an integer/]
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
    [[], "zcopy: choose a command: bench, serve or doctor (see 'zcopy --help')\n"]
  ])('zcopy %j', async (args, line) => {
    const { code, stdout, stderr } = await runCli(args)
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: line })
  })
})
