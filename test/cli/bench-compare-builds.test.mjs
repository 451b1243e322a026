import { afterEach, beforeEach, expect, test } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, groupGone, runCli, startCli } from './cli.mjs'

// bench/http/compare-builds.js: this checkout's zcopy serve against another
// build's, with the tuned nginx as the anchor, loaded over loopback for real.
const COMPARE = fileURLToPath(new URL('../../bench/http/compare-builds.js', import.meta.url))
const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url))
const nginxAndWrk = spawnSync('nginx', ['-v']).status === 0 && spawnSync('wrk', ['--version']).error === undefined
const h2load = spawnSync('h2load', ['--version']).error === undefined

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-compare-builds-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

test.skipIf(!nginxAndWrk)('a base that loads: three servers in rotated rounds, the ratios, nothing left behind', async () => {
  const cli = startCli(['--base', CHECKOUT, '--file', '4k', '--rounds', '2', '--seconds', '1', '--workers', '2', '--threads', '2'], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true) // no zcopy serve, nginx or wrk left running
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const rounds = [...stdout.matchAll(/^round (\d)\/2: (\w+) \d+, (\w+) \d+, (\w+) \d+ req\/s$/gm)]
  expect(rounds.map((round) => round.slice(2).join(' '))).toEqual(['checkout base nginx', 'base nginx checkout'])
  expect(stdout).toMatch(/^4k, 16 connections, 2 workers, wrk -t2, 2 rounds: checkout ÷ nginx \d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\), base ÷ nginx .+, checkout ÷ base .+$/m)
  expect(stdout).toMatch(/^checkout: \/.+\.node; base: \/.+\.node$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the served file and nginx's prefix removed
})

test.skipIf(!nginxAndWrk)('--tls: the three servers over TLS 1.3, the certificate removed afterwards', async () => {
  const cli = startCli(['--base', CHECKOUT, '--file', '64k', '--rounds', '1', '--seconds', '1', '--tls'], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^round 1\/1: checkout [1-9]\d*, base [1-9]\d*, nginx [1-9]\d* req\/s$/m) // every server answered HTTPS
  expect(stdout).toMatch(/^64k over TLS 1\.3, 16 connections, 1 worker, wrk -t1, 1 rounds: checkout ÷ nginx /m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the certificate's folder too
})

test.skipIf(!nginxAndWrk || !h2load)('--http2: the three servers over HTTP/2 and TLS 1.3, loaded by h2load', async () => {
  const cli = startCli(['--base', CHECKOUT, '--file', '4k', '--rounds', '1', '--seconds', '1', '--http2', '--streams', '4'], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^round 1\/1: checkout [1-9]\d*, base [1-9]\d*, nginx [1-9]\d* req\/s$/m) // every server answered HTTP/2
  expect(stdout).toMatch(/^4k over HTTP\/2 and TLS 1\.3, 16 connections, 1 worker, h2load -t1 -m4, 1 rounds: checkout ÷ nginx /m)
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test.skipIf(!nginxAndWrk)('--server: a zcopy kind of bench/http/server.js with each side\'s lib/', async () => {
  const cli = startCli(['--base', CHECKOUT, '--file', '64k', '--rounds', '1', '--seconds', '1', '--server', 'zcopy (Koa)'], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^round 1\/1: checkout [1-9]\d*, base [1-9]\d*, nginx [1-9]\d* req\/s$/m)
  const lib = path.join(CHECKOUT, 'lib')
  expect(stdout).toContain(`checkout: zcopy (Koa) with ${lib} with /`)
  expect(stdout).toContain(`; base: zcopy (Koa) with ${lib} with /`)
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test('--server with a base that is only an addon: one line, exit code 2', async () => {
  const { code, stdout, stderr } = await runCli(['--base', tmpdir, '--server', 'zcopy (Fastify)'], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toBe(`--server 'zcopy (Fastify)' runs the base's lib/: --base ${tmpdir} must be a checkout\n`)
})

// A base without an addon would measure the pure-JS fallback under the addon's name.
test('a base from which no addon loads: one line, exit code 2, no server started', async () => {
  const { code, stdout, stderr } = await runCli(['--base', tmpdir], { cli: COMPARE, env: { TMPDIR: tmpdir } })
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toBe(`--base ${tmpdir}: no zcopy addon loads from it (build it with npm run build; an older checkout, with binding.gyp at its root: npx node-gyp rebuild)\n`)
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test('no nginx on the PATH: one line, exit code 2, no server started', async () => {
  const { code, stdout, stderr } = await runCli(['--base', CHECKOUT], { cli: COMPARE, env: { TMPDIR: tmpdir, PATH: tmpdir } })
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toBe('nginx is not installed (apt-get install nginx-light): it is the anchor of these benchmarks\n')
  expect(fs.readdirSync(tmpdir)).toEqual([])
})

test('bad options: the usage line, exit code 2', async () => {
  for (const args of [[], ['--base', CHECKOUT, '--file', '2m'], ['--base', CHECKOUT, '--rounds', '0'], ['--base', CHECKOUT, '--connections', 'many'], ['--base', CHECKOUT, '--workers', '0'], ['--base', CHECKOUT, '--threads', '0'],
    ['--base', CHECKOUT, '--connections', '2', '--threads', '3'], ['--base', CHECKOUT, '--server', 'sirv'], ['--base', CHECKOUT, '--server', 'zcopy (Hapi)'],
    ['--base', CHECKOUT, '--http2', '--file', 'files-100'], ['--base', CHECKOUT, '--http2', '--server', 'zcopy (Koa)'], ['--base', CHECKOUT, '--http2', '--streams', '0'], ['--base', CHECKOUT, '--pin', '--workers', '2']]) {
    expectOneLineUsageError(await runCli(args, { cli: COMPARE }), /^bench\/http\/compare-builds\.js: expected --base DIR /, 'bench/http/compare-builds.js')
  }
})
