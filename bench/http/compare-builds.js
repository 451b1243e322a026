'use strict'

// Two builds of the addon side by side, with the tuned nginx as the anchor:
//   node bench/http/compare-builds.js --base DIR [--file 1m] [--connections 16]
//                                     [--rounds 6] [--seconds 3] [--workers 1]
// `zcopy serve` (the CLI, one process unless --workers) runs twice on the same files: once with
// this checkout's addon, once with the one in DIR/build/Release (ZCOPY_PREBUILD=DIR,
// e.g. a `git worktree` of another commit, built with `npx node-gyp rebuild`).
// Each round runs the three servers in a rotated order (each takes each place
// equally often), `wrk -t1` for --seconds after one 1 s warm-up per server
// (--workers N: `zcopy serve --workers N` and nginx's `worker_processes N`); the
// figures are the median of the per-round ratios with their min–max. A check
// that both sides load an addon runs first: a DIR without one would measure the
// pure-JS fallback (ZCOPY_NATIVE is ignored here for the same reason).

const { execFileSync } = require('node:child_process')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { parseArgs } = require('node:util')
const { freePort } = require('./free-port')
const { startNginx } = require('./nginx')
const { startZcopyServe } = require('./zcopy-serve')
const { measure } = require('./load')
const { median } = require('./stats')

const SIZES = { '4k': 4096, '64k': 65536, '1m': 1 << 20, '100m': 100 << 20 }

function options () {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' },
      file: { type: 'string', default: '1m' },
      connections: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '3' },
      workers: { type: 'string', default: '1' }
    }
  })
  const counts = ['connections', 'rounds', 'seconds', 'workers'].map((name) => Number(values[name]))
  if (!values.base || !(values.file in SIZES) || !counts.every((n) => Number.isInteger(n) && n > 0)) {
    process.stderr.write(`usage: compare-builds.js --base DIR [--file ${Object.keys(SIZES).join('|')}] [--connections N] [--rounds N] [--seconds N] [--workers N]\n`)
    process.exit(2)
  }
  const [connections, rounds, seconds, workers] = counts
  return { base: resolve(values.base), file: values.file, connections, rounds, seconds, workers }
}

// What makes `zcopy` load the addon of `dir` (null: this checkout's).
function envFor (dir) {
  return dir === null ? {} : { ZCOPY_PREBUILD: dir }
}

// The addon file `zcopy` loads with envFor(dir), or null for none.
function binaryWith (dir) {
  const script = "const b = require('./lib/binding'); process.stdout.write(JSON.stringify(b.loadError === null ? b.binary.path : null))"
  const env = { ...process.env, ...envFor(dir) }
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: join(__dirname, '..', '..'), env, encoding: 'utf8' }))
}

function spread (values) {
  return `${median(values).toFixed(2)}× (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
}

async function main () {
  const { base, file, connections, rounds, seconds, workers } = options()
  delete process.env.ZCOPY_NATIVE // addons are compared: neither side may fall back
  const binaries = { checkout: binaryWith(null), base: binaryWith(base) }
  for (const [name, binary] of Object.entries(binaries)) {
    if (binary === null) {
      process.stderr.write(`${name === 'base' ? `--base ${base}` : 'this checkout'}: no zcopy addon loads from it (build it with npx node-gyp rebuild)\n`)
      process.exit(2)
    }
  }
  const root = mkdtempSync(join(tmpdir(), 'zcopy-compare-'))
  writeFileSync(join(root, file), Buffer.alloc(SIZES[file], 7))
  const servers = {}
  try {
    const nginxPort = await freePort()
    servers.nginx = { ...await startNginx(root, nginxPort, workers), port: nginxPort }
    servers.checkout = await startZcopyServe(root, workers, null, envFor(null))
    servers.base = await startZcopyServe(root, workers, null, envFor(base))
    const names = ['checkout', 'base', 'nginx']
    const url = (name) => `http://127.0.0.1:${servers[name].port}/${file}`
    for (const name of names) await measure(url(name), { connections, seconds: 1 })
    const rps = { checkout: [], base: [], nginx: [] }
    for (let round = 0; round < rounds; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length])
      if (round % 6 >= 3) order.reverse()
      for (const name of order) rps[name].push((await measure(url(name), { connections, seconds })).requestsPerSecond)
      console.log(`round ${round + 1}/${rounds}: ${order.map((name) => `${name} ${Math.round(rps[name][round])}`).join(', ')} req/s`)
    }
    const ratio = (a, b) => rps[a].map((value, i) => value / rps[b][i])
    console.log(`${file}, ${connections} connections, ${workers} worker${workers > 1 ? 's' : ''}, ${rounds} rounds: checkout ÷ nginx ${spread(ratio('checkout', 'nginx'))}, ` +
      `base ÷ nginx ${spread(ratio('base', 'nginx'))}, checkout ÷ base ${spread(ratio('checkout', 'base'))}`)
    console.log(`checkout: ${binaries.checkout}; base: ${binaries.base}`)
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
