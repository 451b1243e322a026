import { afterEach, beforeEach, expect, test } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { groupGone, runCli, startCli, waitForStdout } from './cli.mjs'

// bench/http/instructions.js: servers under callgrind, loaded over loopback for
// real, their instructions per request read from callgrind's dumps.
const TOOL = fileURLToPath(new URL('../../bench/http/instructions.js', import.meta.url))
const valgrind = spawnSync('valgrind', ['--version']).error === undefined && spawnSync('callgrind_control', ['--version']).error === undefined
if (!valgrind) console.warn('bench-instructions.test.mjs: valgrind is not installed (apt-get install valgrind): the tests that run servers under callgrind are skipped')

const FLOOR = 'node:http res.end(buffer)'
const SMALL = ['--cases', '4k', '--requests', '200', '--warm-up', '200']

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-instructions-test-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

// A loaded 2-core CI machine runs Node under callgrind two or three times slower.
test.skipIf(!valgrind)('(needs valgrind) Node\'s floor and serveStatic: a table of thousands of instructions per request, the ratio, nothing left behind', async () => {
  const cli = startCli(['--servers', `${FLOOR},zcopy (node:http)`, ...SMALL], { cli: TOOL, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true) // no server under valgrind, no callgrind_control left
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const lines = stdout.split('\n')
  expect(lines[0]).toBe("# node bench/http/instructions.js --servers 'node:http res.end(buffer),zcopy (node:http)' --cases 4k --requests 200 --warm-up 200")
  expect(lines[1]).toMatch(/^machine: .+; Node v\d+\.\d+\.\d+.*; \d{4}-\d\d-\d\d \d\d:\d\d UTC$/)
  expect(lines[2]).toMatch(/^valgrind-\S+ --tool=callgrind, user-space instructions only: 200 requests counted after 200 warm-up requests, 4 keep-alive connections .+; baseline: Node's floor$/)
  expect(stdout).toMatch(/^this checkout: addon \/.+\.node$/m)
  expect(stdout).toMatch(/^run 1\/1 {2}4k {2}zcopy \(node:http\) {10}main thread \d+\.\dk, all \d+ threads \d+\.\dk instructions\/request \(counted at \d+ requests\/s\)$/m)
  const table = lines.filter((line) => line.startsWith('|'))
  expect(table.slice(0, 2)).toEqual(['| thousand instructions per request | 4k: main thread | 4k: all threads |', '|---|---:|---:|'])
  const cells = (label) => table.find((line) => line.startsWith(`| ${label} |`)).split('|').slice(2, -1).map((cell) => cell.trim())
  for (const label of ["Node's floor: node:http res.end(buffer)", 'zcopy (node:http)']) {
    const [main, all] = cells(label).map(Number)
    expect(main).toBeGreaterThan(10) // thousands: between 10k and 10M per request
    expect(all).toBeLessThan(10_000)
    expect(all).toBeGreaterThanOrEqual(main)
  }
  const ratios = cells("zcopy (node:http) ÷ Node's floor")
  expect(ratios).toHaveLength(2)
  for (const ratio of ratios) expect(ratio).toMatch(/^\d+\.\d{3}×$/)
  expect(table).toHaveLength(5)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the served files, the dumps and vgdb's FIFOs removed
}, 120_000)

test.skipIf(!valgrind)('(needs valgrind) --http2: zcopy serve over TLS and HTTP/2, a node:http2 client, nothing left behind', async () => {
  const cli = startCli(['--servers', 'zcopy serve', '--http2', '--streams', '3', '--cases', '4k', '--requests', '60', '--warm-up', '60'],
    { cli: TOOL, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/, 4 HTTP\/2 sessions over TLS 1\.3, 3 streams each \(node:http2 client\), a fresh server per measurement; baseline: zcopy serve$/m)
  const [main, all] = stdout.split('\n').find((line) => line.startsWith('| zcopy serve |')).split('|').slice(2, -1).map(Number)
  expect(main).toBeGreaterThan(10)
  expect(all).toBeGreaterThanOrEqual(main)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the certificate's folder too
}, 180_000)

test.skipIf(!valgrind)('(needs valgrind) a server that fails to start: one line, exit code 1, nothing left behind', async () => {
  const base = path.join(tmpdir, 'base') // a checkout whose addon "loads" but whose lib/ throws
  fs.mkdirSync(path.join(base, 'lib'), { recursive: true })
  fs.writeFileSync(path.join(base, 'lib', 'binding.js'), "module.exports = { loadError: null, binary: { path: '/a.node' } }\n")
  fs.writeFileSync(path.join(base, 'lib', 'index.js'), "throw new Error('a broken base')\n")
  const work = path.join(tmpdir, 'tmp')
  fs.mkdirSync(work)
  const cli = startCli(['--servers', 'zcopy (node:http)', '--base', base, ...SMALL], { cli: TOOL, env: { TMPDIR: work } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(code).toBe(1)
  expect(stdout).toMatch(/^run 1\/1 {2}4k {2}zcopy \(node:http\) {9}main thread/m) // this checkout's ran
  expect(stderr).toMatch(/Error: a broken base/) // the server's own error
  expect(stderr).toMatch(/\nbench\/http\/instructions\.js: bench server 'zcopy \(node:http\)' exited before listening \(exit code 1\)\n$/)
  expect(fs.readdirSync(work)).toEqual([])
}, 120_000)

test.skipIf(!valgrind)('(needs valgrind) SIGINT during a measurement: the server stopped, the files removed, exit code 130', async () => {
  const cli = startCli(['--servers', FLOOR, '--cases', 'files-100', '--requests', '100000', '--warm-up', '100000'], { cli: TOOL, env: { TMPDIR: tmpdir } })
  await waitForStdout(cli, /^1 measurement/m)
  await new Promise((resolve) => setTimeout(resolve, 6000)) // the warm-up (or, on a slow machine, valgrind starting Node)
  cli.child.kill('SIGINT') // the tool alone, not its group: it must stop its children itself
  const { code, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('bench/http/instructions.js: stopped by SIGINT\n')
  expect(code).toBe(130)
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test('bad options, nginx, a --base that cannot serve: one line, exit code 2, nothing started', async () => {
  const cases = [
    [['--servers', 'nginx'], /^--servers: nginx is not measured here \(not a Node process/],
    [['--servers', 'zcopy (node:http),lighttpd'], /^--servers: unknown 'lighttpd'; known: zcopy \(node:http\), .*, zcopy serve$/],
    [['--servers', `${FLOOR},${FLOOR}`], /^--servers names a server twice$/],
    [['--cases', '3k'], /^unknown case 3k: choose from 4k, /],
    [['--requests', '0'], /^--requests takes a whole number from 1, not '0'$/],
    [['--warm-up', 'lots'], /^--warm-up takes a whole number from 0, not 'lots'$/],
    [['--connections', '1.5'], /^--connections takes a whole number from 1, not '1.5'$/],
    [['--repeat', '0'], /^--repeat takes a whole number from 1, not '0'$/],
    [['--repeat', '-1'], /^Option '--repeat' argument is ambiguous\. Did you forget/],
    [['--rounds', '3'], /^Unknown option '--rounds'/],
    [['--base', tmpdir, '--servers', FLOOR], /^--base: none of --servers is a zcopy kind/],
    [['--base', tmpdir, '--servers', 'zcopy serve'], /^--base \/.+: no bin\/zcopy\.js \(--base takes another zcopy checkout\)$/],
    [['--base', tmpdir, '--servers', 'zcopy (Express)'], /^--base \/.+: no lib\/index\.js /],
    [['--http2', '--servers', 'zcopy serve,zcopy (node:http)'], /^--http2: 'zcopy serve' only/],
    [['--streams', '4'], /^--streams: with --http2 only$/],
    [['--http2', '--servers', 'zcopy serve', '--streams', '0'], /^--streams takes a whole number from 1, not '0'$/]
  ]
  for (const [args, pattern] of cases) {
    const { code, stdout, stderr } = await runCli(args, { cli: TOOL, env: { TMPDIR: tmpdir } })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(stderr.trimEnd().replace(/^bench\/http\/instructions\.js: /, '')).toMatch(pattern)
  }
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

// A base without an addon would measure the pure-JS fallback under zcopy's name.
test.skipIf(!valgrind)('(needs valgrind) a --base from which no addon loads: one line, exit code 2, no server started', async () => {
  const base = path.join(tmpdir, 'base')
  fs.mkdirSync(path.join(base, 'lib'), { recursive: true })
  fs.writeFileSync(path.join(base, 'lib', 'index.js'), '')
  const { code, stdout, stderr } = await runCli(['--servers', 'zcopy (node:http)', '--base', base], { cli: TOOL })
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toBe(`bench/http/instructions.js: --base ${base}: no zcopy addon loads from it (build it with npm run build; an older checkout, with binding.gyp at its root: npx node-gyp rebuild; its node_modules installed)\n`)
})

test('valgrind missing: how to install it, exit code 2', async () => {
  const { code, stdout, stderr } = await runCli(['--requests', '10'], { cli: TOOL, env: { PATH: tmpdir } }) // Node itself is process.execPath
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toBe('bench/http/instructions.js: valgrind is not installed (apt-get install valgrind): it counts the instructions\n')
})
