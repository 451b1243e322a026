'use strict'

// Two builds of zcopy side by side, with the tuned nginx as the anchor:
//   node bench/http/compare-builds.js --base DIR [--file 1m] [--connections 16]
//                                     [--rounds 6] [--seconds 3] [--workers 1]
//                                     [--threads 1] [--tls] [--http2 [--streams 10]]
//                                     [--server KIND] [--pin]
// `zcopy serve` (the CLI, one process unless --workers) runs twice on the same
// files: once from this checkout, once from DIR; or, with --server, one of
// bench/http/server.js's zcopy kinds ('zcopy (node:http)', 'zcopy (Express)',
// 'zcopy (Fastify)', 'zcopy (Koa)'), with this checkout's lib/ and with DIR's
// (DIR must then be a checkout). DIR is either another checkout
// (e.g. a `git worktree` of another commit, its node_modules installed or
// linked): its own CLI, JavaScript and addon run; or a directory with only an
// addon in DIR/build/Release (built with `npm run build`; in a checkout from
// before zcopy.gyp, with binding.gyp at its root, `npx node-gyp rebuild`): this
// checkout's CLI runs with that addon (ZCOPY_PREBUILD=DIR).
// --file: a case of bench/http/cases.js: one file of 4k, 64k, 1m or 100m, or a
// many-files case (files-100, files-5000, files-5000-zipf: wrk's Lua script picks
// each request's path, after a 3 s warm-up).
// Each round runs the three servers in a rotated order (each takes each place
// equally often), `wrk -t1` for --seconds after one warm-up per server
// (--workers N: `zcopy serve --workers N` and nginx's `worker_processes N`;
// --threads N: `wrk -tN`, as bench/http/run.js loads N workers; --tls: all
// three over TLS 1.3 with one self-signed certificate, as run.js --tls); the
// figures are the median of the per-round ratios with their min–max. --http2:
// over TLS as --tls, each server speaking HTTP/2 (zcopy serve --http2, nginx's
// `http2`), loaded by h2load (nghttp2-client) with --streams requests in flight
// per connection (10); zcopy serve only, and not with the many-files cases.
// --pin: the three servers on CPU 0, the load generator on CPU 1 (pin.js, as
// run.js --pin); one worker only. A check
// that both sides load an addon runs first: a DIR without one would measure the
// pure-JS fallback (ZCOPY_NATIVE is ignored here for the same reason).

const { execFileSync } = require('node:child_process')
const { randomInt } = require('node:crypto')
const { existsSync, mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { isFileCase, selectCases, prepareCase } = require('./cases')
const { freePort } = require('./free-port')
const { NOT_INSTALLED, nginxInstalled, startNginx } = require('./nginx')
const { startZcopyServe } = require('./zcopy-serve')
const { h2loadInstalled, measure } = require('./load')
const { formatRatios } = require('./stats')
const { pinServer, pinningUnavailable } = require('./pin')
const { makeCertificate } = require('./tls')
const { KINDS, startServer } = require('./server')
const { parseOptions, usageError } = require('../lib/usage')

const CHECKOUT = join(__dirname, '..', '..')
const CHECKOUT_CLI = join(CHECKOUT, 'bin', 'zcopy.js')
const WARM_UP_SECONDS = 1
const ZCOPY_SERVE = 'zcopy serve'

function usage () {
  usageError(__filename, 'expected --base DIR [--file 4k|64k|1m|100m|files-100|files-5000|files-5000-zipf] [--connections N] [--rounds N] [--seconds N] [--workers N] [--threads N] [--tls] [--http2 [--streams N]] [--server KIND] [--pin] (--http2: zcopy serve, one file, h2load installed; --pin: one worker, 2 CPUs, taskset)')
}

function options () {
  const { values } = parseOptions(__filename, {
    options: {
      base: { type: 'string' },
      file: { type: 'string', default: '1m' },
      connections: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '3' },
      workers: { type: 'string', default: '1' },
      threads: { type: 'string', default: '1' },
      tls: { type: 'boolean', default: false },
      http2: { type: 'boolean', default: false },
      streams: { type: 'string', default: '10' },
      pin: { type: 'boolean', default: false },
      server: { type: 'string', default: ZCOPY_SERVE }
    }
  })
  let cases
  try {
    cases = selectCases({ cases: values.file })
  } catch {
    usage()
  }
  const counts = ['connections', 'rounds', 'seconds', 'workers', 'threads', 'streams'].map((name) => Number(values[name]))
  if (!values.base || cases.length !== 1 || !counts.every((n) => Number.isInteger(n) && n > 0)) usage()
  const [connections, rounds, seconds, workers, threads, streams] = counts
  if (threads > connections) usage() // wrk: every thread needs a connection
  const server = values.server
  if (server !== ZCOPY_SERVE && !(KINDS.includes(server) && server.startsWith('zcopy'))) usage()
  if (values.http2 && (server !== ZCOPY_SERVE || isFileCase(cases[0]) || !h2loadInstalled())) usage()
  if (values.pin && (workers > 1 || pinningUnavailable() !== null)) usage()
  const protocol = values.http2 ? 'h2' : 'http/1.1'
  return { base: resolve(values.base), file: cases[0], connections, rounds, seconds, workers, threads, tls: values.tls || values.http2, protocol, streams, pinned: values.pin, server }
}

// How to run zcopy serve from `dir` (null: this checkout): { cwd, cli, env }.
function sideOf (dir) {
  if (dir === null) return { cwd: CHECKOUT, cli: CHECKOUT_CLI, env: {} }
  const cli = join(dir, 'bin', 'zcopy.js')
  if (existsSync(cli)) return { cwd: dir, cli, env: {} }
  return { cwd: CHECKOUT, cli: CHECKOUT_CLI, env: { ZCOPY_PREBUILD: dir } }
}

// The addon file a side loads, or null for none. Throws (the child's stderr in
// the message) when its lib/engine/binding.js (lib/binding.js in a checkout from
// before lib/engine/) does not load at all.
function binaryOf ({ cwd, env }) {
  const script = "const fs = require('fs'); const b = require(fs.existsSync('./lib/engine/binding.js') ? './lib/engine/binding' : './lib/binding'); " +
    'process.stdout.write(JSON.stringify(b.loadError === null ? b.binary.path : null))'
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
}

// { side name: addon file } for `sides`; exits (code 2, a line on stderr) when a
// side loads none: it would measure the JavaScript fallback, not a build.
function requireAddons (sides, base) {
  const binaries = {}
  for (const [name, side] of Object.entries(sides)) {
    binaries[name] = binaryOf(side)
    if (binaries[name] === null) {
      process.stderr.write(`${name === 'base' ? `--base ${base}` : 'this checkout'}: no zcopy addon loads from it (build it with npm run build; an older checkout, with binding.gyp at its root: npx node-gyp rebuild)\n`)
      process.exit(2)
    }
  }
  return binaries
}

async function main () {
  const { base, file, connections, rounds, seconds, workers, threads, tls, protocol, streams, pinned, server } = options()
  delete process.env.ZCOPY_NATIVE // addons are compared: neither side may fall back
  if (!nginxInstalled()) {
    process.stderr.write(`${NOT_INSTALLED}\n`)
    process.exit(2)
  }
  const sides = { checkout: sideOf(null), base: sideOf(base) }
  if (server !== ZCOPY_SERVE && sides.base.cwd !== base) {
    process.stderr.write(`--server '${server}' runs the base's lib/: --base ${base} must be a checkout\n`)
    process.exit(2)
  }
  const binaries = requireAddons(sides, base)
  const root = mkdtempSync(join(tmpdir(), 'zcopy-compare-'))
  const target = prepareCase(root, file)
  const servers = {}
  let certificate = null
  try {
    if (tls) certificate = { ...makeCertificate(), http2: protocol === 'h2' }
    const nginxPort = await freePort()
    servers.nginx = { ...await startNginx(root, nginxPort, workers, certificate), port: nginxPort }
    for (const name of ['checkout', 'base']) {
      servers[name] = server === ZCOPY_SERVE
        ? await startZcopyServe(root, workers, { tls: certificate, env: sides[name].env, cli: sides[name].cli })
        : await startServer(server, root, { workers, tls: certificate, env: name === 'base' ? { ZCOPY_BENCH_LIB: join(base, 'lib') } : {} })
    }
    const names = ['checkout', 'base', 'nginx']
    if (pinned) for (const name of names) pinServer(servers[name].pid)
    const scheme = tls ? 'https' : 'http'
    const load = (name, duration) => measure(`${scheme}://127.0.0.1:${servers[name].port}${target.path ?? '/'}`, {
      threads, connections, seconds: duration, script: target.script, args: [randomInt(1, 2 ** 31)], protocol, streams, pinned
    })
    for (const name of names) await load(name, target.warmUpSeconds ?? WARM_UP_SECONDS)
    const rps = { checkout: [], base: [], nginx: [] }
    for (let round = 0; round < rounds; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length])
      if (round % 6 >= 3) order.reverse()
      for (const name of order) rps[name].push((await load(name, seconds)).requestsPerSecond)
      console.log(`round ${round + 1}/${rounds}: ${order.map((name) => `${name} ${Math.round(rps[name][round])}`).join(', ')} req/s`)
    }
    const ratio = (a, b) => rps[a].map((value, i) => value / rps[b][i])
    const loadedBy = (protocol === 'h2' ? `h2load -t${threads} -m${streams}` : `wrk -t${threads}`) + (pinned ? ' on CPU 1, the servers on CPU 0' : '')
    console.log(`${file}${protocol === 'h2' ? ' over HTTP/2 and TLS 1.3' : tls ? ' over TLS 1.3' : ''}, ${connections} connections, ${workers} worker${workers > 1 ? 's' : ''}, ${loadedBy}, ${rounds} rounds: checkout ÷ nginx ${formatRatios(ratio('checkout', 'nginx'))}, ` +
      `base ÷ nginx ${formatRatios(ratio('base', 'nginx'))}, checkout ÷ base ${formatRatios(ratio('checkout', 'base'))}`)
    const ran = (name) => server === ZCOPY_SERVE ? sides[name].cli : `${server} with ${join(sides[name].cwd, 'lib')}`
    console.log(`checkout: ${ran('checkout')} with ${binaries.checkout}; base: ${ran('base')} with ${binaries.base}`)
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
    rmSync(root, { recursive: true, force: true })
    if (certificate !== null) certificate.remove()
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err)
    process.exitCode = 1
  })
}

module.exports = { binaryOf, requireAddons, sideOf }
