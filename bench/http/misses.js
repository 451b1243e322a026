'use strict'

// What a miss costs, two builds side by side:
//   node bench/http/misses.js --base DIR [--rounds 6] [--seconds 2] [--warm-up 4]
//                             [--connections 16]
// `zcopy serve` (one process) from this checkout and from DIR (as
// compare-builds.js takes it: another checkout, or a directory with only an
// addon), each started afresh every round, warmed up for --warm-up seconds on one
// tree of 5,000 files of 4 KiB (files-5000: its JavaScript compiled, its thread
// pool started, the tree's folders watched), then loaded for --seconds (wrk -t1,
// the files at random) on a copy of that tree it was never asked for: at first
// every request is a miss (the name looked up, the file opened and proven
// beneath the root, its folders watched, the path remembered). The two alternate
// (each goes first every other round). Prints each round's requests per second
// and the server's CPU per request, then the medians of the per-round ratios,
// checkout ÷ base, with their min–max.

const { randomInt } = require('node:crypto')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { requireAddons, sideOf } = require('./compare-builds')
const { cpuTime, perRequest } = require('./cpu')
const { measure, wrkInstalled } = require('./load')
const { prepare } = require('./many-files')
const { formatRatios } = require('./stats')
const { startZcopyServe } = require('./zcopy-serve')
const { parseOptions, usageError } = require('../lib/usage')

const CASE = 'files-5000'

function usage () {
  usageError(__filename, 'expected --base DIR [--rounds N] [--seconds N] [--warm-up N] [--connections N]')
}

function options () {
  const { values } = parseOptions(__filename, {
    options: {
      base: { type: 'string' },
      rounds: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '2' },
      'warm-up': { type: 'string', default: '4' },
      connections: { type: 'string', default: '16' }
    }
  })
  const counts = ['rounds', 'seconds', 'warm-up', 'connections'].map((name) => Number(values[name]))
  if (!values.base || !counts.every((n) => Number.isInteger(n) && n > 0)) usage()
  const [rounds, seconds, warmUp, connections] = counts
  return { base: resolve(values.base), rounds, seconds, warmUp, connections }
}

// One side's round: a fresh server, warmed up on the `warm` tree, measured on the
// `cold` one. → { rps, cpu: µs per request (user + system) }.
async function missRound (root, side, scripts, { seconds, warmUp, connections }) {
  const server = await startZcopyServe(root, 1, { env: side.env, cli: side.cli })
  try {
    const url = `http://127.0.0.1:${server.port}/`
    await measure(url, { connections, seconds: warmUp, script: scripts.warm, args: [randomInt(1, 2 ** 31)] })
    const before = cpuTime(server.pid)
    const result = await measure(url, { connections, seconds, script: scripts.cold, args: [randomInt(1, 2 ** 31)] })
    const cpu = perRequest(before, cpuTime(server.pid), result.requests)
    if (result.errors > 0) throw new Error(`${result.errors} failed requests`)
    return { rps: result.requestsPerSecond, cpu: cpu === null ? NaN : cpu.user + cpu.system }
  } finally {
    await server.stop()
  }
}

async function main () {
  const { base, rounds, seconds, warmUp, connections } = options()
  delete process.env.ZCOPY_NATIVE // addons are compared: neither side may fall back
  if (!wrkInstalled) {
    process.stderr.write('wrk is not installed (apt-get install wrk): the trees are requested by its Lua script\n')
    process.exit(2)
  }
  const sides = { checkout: sideOf(null), base: sideOf(base) }
  requireAddons(sides, base)
  const root = mkdtempSync(join(tmpdir(), 'zcopy-misses-'))
  try {
    const scripts = { warm: prepare(root, CASE, 'warm'), cold: prepare(root, CASE, 'cold') }
    const runs = { checkout: [], base: [] }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['checkout', 'base'] : ['base', 'checkout']
      for (const name of order) runs[name].push(await missRound(root, sides[name], scripts, { seconds, warmUp, connections }))
      console.log(`round ${round + 1}/${rounds}: ${order.map((name) => {
        const { rps, cpu } = runs[name][round]
        return `${name} ${Math.round(rps)} req/s, ${Math.round(cpu)} µs CPU/request`
      }).join('; ')}`)
    }
    const ratios = (key) => runs.checkout.map((run, i) => run[key] / runs.base[i][key])
    console.log(`${CASE}, the first ${seconds} s on a tree never asked for, ${connections} connections, ${rounds} rounds: ` +
      `checkout ÷ base ${formatRatios(ratios('rps'))} the requests per second, ${formatRatios(ratios('cpu'))} the CPU per request`)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err)
    process.exitCode = 1
  })
}
