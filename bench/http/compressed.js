'use strict'

// Compressed text assets (issue 48): a 212 KiB JavaScript bundle
// (bundle.js), requested with `Accept-Encoding: gzip, deflate, br` as every
// browser sends it, by wrk -t1 -cC for S s after a warm-up, each server in turn,
// R alternating rounds. Reports the median req/s, the server's CPU per request
// (/proc) and the bytes per response on the wire (wrk's bytes read / requests,
// head included), with ratios to a reference.
//
//   node bench/http/compressed.js [--rounds 3] [--seconds 3] [--connections 16] [--only a,b] [--size BYTES]
//
// --size: another bundle size (212 KiB by default: its br variant, 41 KB, is
// answered from memory; above ~320 KiB the variant is over 64 KiB and goes by
// sendfile from the cache folder).
//
// Servers (each one process; a missing one is skipped with a note):
//   zcopy-serve          zcopy serve (defaults: compress on, native lane), folder WITHOUT siblings
//   zcopy-serve-node     the same with --no-native-lane (every request through Node's HTTP stack)
//   zcopy-serve-pre      zcopy serve --precompressed --no-compress, prebuilt .br/.gz
//   zcopy-express        Express + compression() + serveStatic({ compress: true }), no siblings
//   static-express       Express + compression() + express.static, no siblings
//   sirv                 sirv { brotli, gzip } with prebuilt siblings
//   nginx-gzip           nginx (tuned) gzip on, gzip_comp_level 6, no siblings
//   nginx-gzip-static    nginx (tuned) gzip_static on, prebuilt .gz
//   h2o-send-compressed  h2o (tuned as nginx, h2o.js) file.send-compressed, prebuilt siblings
//   caddy-encode         Caddy file_server + encode zstd gzip, no siblings
//   caddy-precompressed  Caddy file_server { precompressed br gzip }, prebuilt siblings
// Prebuilt siblings: brotli 11 and gzip 9 (zlib), as a build step makes them.
// Every server is warmed up (and the zcopy ones have made their variants: the
// warm-up requests until the answer is compressed) before it is measured.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')
const { cpuTime } = require('./cpu')
const { ACCEPT, SERVERS, probe, runnable: canRun, untilCompressed, writeFolders } = require('./compressed-servers')
const { freePort } = require('./free-port')
const { machineLine } = require('./machine')
const { parseOptions } = require('../lib/usage')

const run = promisify(execFile)

function args () {
  const { values } = parseOptions(__filename, {
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '16' },
      'warm-up': { type: 'string', default: '3' },
      only: { type: 'string' },
      size: { type: 'string' }
    }
  })
  return {
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    warmUp: Number(values['warm-up']),
    only: values.only === undefined ? null : values.only.split(','),
    size: values.size === undefined ? undefined : Number(values.size)
  }
}

function prepare (size) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-compressed-'))
  fs.chmodSync(base, 0o755) // nginx's and caddy's workers may not be root
  return { base, ...writeFolders(base, size) }
}

async function wrk (port, seconds, connections) {
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '-H', `Accept-Encoding: ${ACCEPT}`, `http://127.0.0.1:${port}/bundle.js`], { maxBuffer: 1 << 20 })
  const requests = Number(/(\d+) requests in/.exec(stdout)[1])
  const units = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }
  const read = /requests in [\d.]+\w+, ([\d.]+)([KMG]?B) read/.exec(stdout)
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)
  return { requests, rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1]), bytesRead: Number(read[1]) * units[read[2]], errors: bad ? Number(bad[1]) : 0 }
}

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

async function measureOne (name, folders, options) {
  const spec = SERVERS[name]
  const port = await freePort()
  const server = await spec.start(folders[spec.folder], port)
  try {
    // Warm-up: for the zcopy servers, until the answer is compressed (the
    // variant is made: how long that took is reported), then the JIT and caches.
    const { readyMs: ready } = await untilCompressed(name, port)
    await wrk(port, options.warmUp, options.connections)
    const first = await probe(port)
    const before = cpuTime(server.pid)
    const result = await wrk(port, options.seconds, options.connections)
    const after = cpuTime(server.pid)
    const cpuUs = (after.user + after.system - before.user - before.system) * 1e6 / result.requests
    return { ...result, cpuUs, encoding: first.encoding, body: first.bytes, wire: result.bytesRead / result.requests, readyMs: ready }
  } finally {
    await server.stop()
  }
}

async function main () {
  const options = args()
  const folders = prepare(options.size)
  const names = Object.keys(SERVERS).filter((name) => options.only === null || options.only.includes(name))
  const skipped = []
  const runnable = names.filter((name) => {
    if (canRun(name)) return true
    skipped.push(`${name}: ${SERVERS[name].needs[0]} is not installed`)
    return false
  })
  const load = os.loadavg().map((n) => n.toFixed(2)).join(' ')
  console.log(`# ${new Date().toISOString()} ${machineLine()}; load ${load}; wrk -t1 -c${options.connections} -d${options.seconds}s (warm-up ${options.warmUp}s), ${options.rounds} rounds; bundle ${folders.size} B; Node ${process.version}`)
  const results = Object.fromEntries(runnable.map((name) => [name, []]))
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? runnable : [...runnable].reverse()
      for (const name of order) {
        const result = await measureOne(name, folders, options)
        results[name].push(result)
        console.error(`round ${round + 1} ${name}: ${result.rps.toFixed(0)} req/s, ${result.cpuUs.toFixed(0)} µs CPU/req, ${result.encoding} ${result.body} B${result.errors ? `, ${result.errors} errors` : ''}`)
      }
    }
  } finally {
    fs.rmSync(folders.base, { recursive: true, force: true })
  }
  const reference = results['static-express'] ? median(results['static-express'].map((r) => r.rps)) : null
  console.log('| server | req/s (median) | range | × express.static+compression() | CPU µs/req | body | bytes/response on the wire | variant ready after |')
  console.log('|---|---:|---:|---:|---:|---|---:|---:|')
  for (const name of runnable) {
    const rows = results[name]
    const rps = median(rows.map((r) => r.rps))
    const min = Math.min(...rows.map((r) => r.rps))
    const max = Math.max(...rows.map((r) => r.rps))
    const ratio = reference ? `${(rps / reference).toFixed(1)}×` : ''
    console.log(`| ${name} | ${rps.toFixed(0)} | ${min.toFixed(0)}–${max.toFixed(0)} | ${ratio} | ${median(rows.map((r) => r.cpuUs)).toFixed(0)} | ${rows[0].encoding} ${rows[0].body} B | ${median(rows.map((r) => r.wire)).toFixed(0)} | ${SERVERS[name].variants ? `${median(rows.map((r) => r.readyMs)).toFixed(0)} ms` : ''} |`)
  }
  for (const note of skipped) console.log(`skipped: ${note}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
