'use strict'

// Issue 48's third goal: while 1,000 new compressible files are first
// requested, no request waits for a compression. `zcopy serve` serves the
// 212 KiB bundle to wrk -t1 -c16 --latency for S s ("alone"), then again while
// a client (4 at a time) asks for 1,000 new 64 KiB JavaScript files ("burst").
// Four set-ups, a fresh server each, their order alternating from round to
// round:
//   compress     defaults (compress on): the bundle's br variant; each new file
//                queues its brotli 11 variant
//   no-variants  compress on, the same bundle variant and the same burst of
//                requests, but the burst asks with Accept-Encoding: identity,
//                so nothing is made: the burst's own cost, without compression
//   no-compress  --no-compress: the bundle itself (212 KiB), the same burst
//   hits         as no-variants, but every new file was asked for twice before
//                the runs: the same burst of requests without the miss path
//                (no lookup, open or watch; the first requests' own cost)
// compression's share is compress's ratio (burst p99 ÷ alone p99) against
// no-variants'; the first requests' share, no-variants' against hits'. A set-up named NAME@base runs --base DIR's bin/zcopy.js (another
// checkout, e.g. `git archive` of a commit with node_modules linked) instead. Reports, per set-up, the medians (min–max) over the rounds of
// req/s, p50 and p99, the per-round ratio, and the server's RSS and cache
// folder at the end.
//
//   node bench/http/compress-burst.js [--seconds 10] [--rounds 3] [--only compress,no-variants,no-compress,hits] [--base DIR] [--cpu N] [--pace N]
//
// --pace N: the burst asks for N new files a second, each on time whatever the
// answers (an open loop, as users arrive), instead of 4 at a time as fast as they
// are answered. Without it a server that answers a first request sooner gets
// the same 1,000 requests in a shorter stretch of the run, and its p99 is that
// of a denser burst: compare builds with --pace. "burst lasted" tells the stretch.
//
// --cpu N: the server (every thread) on CPU N only (taskset), so that its
// compression threads compete with its own threads, not with wrk's. Run as
// `taskset -c 0 node bench/http/compress-burst.js --cpu 1`, the clients (wrk
// and this script's burst) are on CPU 0 and the server alone on CPU 1, as a
// server's clients are on other machines; without, on 2 cores, the clients'
// own CPU time during the burst is part of what the hot file waits for

const { spawn, execFile } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')
const { makeBundle } = require('./bundle')
const { freePort } = require('./free-port')
const { parseOptions, usageError } = require('../lib/usage')

const run = promisify(execFile)
const ACCEPT = 'gzip, deflate, br'
const { values: options } = parseOptions(__filename, {
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string', default: 'compress,no-variants,no-compress' },
    base: { type: 'string' },
    pace: { type: 'string', default: '0' },
    cpu: { type: 'string' }
  }
})
const seconds = Number(options.seconds)
const rounds = Number(options.rounds)
const SETUPS = options.only.split(',')
const FILES = 1000
const base = options.base ?? null
const pace = Number(options.pace) // new files asked for a second; 0: 4 at a time, as fast as answered
const cpu = options.cpu ?? null // the server's threads on this CPU only (taskset): they compete with each other, not with wrk
if (SETUPS.some((setup) => setup.endsWith('@base')) && base === null) usageError(__filename, 'a set-up@base needs --base DIR (another checkout)')

function get (port, file, accept = ACCEPT) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: file, headers: { 'accept-encoding': accept } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.headers))
    }).on('error', reject)
  })
}

// The server's RSS, its compression processes' included.
function rssMiB (pid) {
  let kib = 0
  for (const each of [pid, ...compressionProcesses(pid)]) {
    try { kib += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${each}/status`, 'utf8'))[1]) } catch {}
  }
  return kib / 1024
}

// The fields of a /proc stat `file` after the command's name (fields[0]: the
// state, field 3 of proc(5)).
function procStat (file) {
  return fs.readFileSync(file, 'utf8').split(') ')[1].split(' ')
}

// The server's compression processes (children running compress/process.js).
function compressionProcesses (pid) {
  const found = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const fields = procStat(`/proc/${name}/stat`)
      if (Number(fields[1]) === pid && fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('compress/process.js')) found.push(Number(name))
    } catch {}
  }
  return found
}

// → { waitMs, compressMs }: how long the server's main thread has waited for a
// CPU (schedstat's run delay), and the CPU time compression has had, in ms: its
// threads at nice 19, its compression processes, and those that have exited
// (its children's times: a process the server stopped, or let go, keeps
// counting).
function schedOf (pid) {
  const ms = (fields, at) => (Number(fields[at]) + Number(fields[at + 1])) * 1000 / 100 // two fields of clock ticks, 100 Hz
  let compressMs = ms(procStat(`/proc/${pid}/stat`), 13) // cutime + cstime: exited children
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = procStat(`/proc/${pid}/task/${tid}/stat`)
      if (Number(fields[16]) === 19) compressMs += ms(fields, 11) // utime + stime
    } catch {}
  }
  for (const child of compressionProcesses(pid)) {
    try { compressMs += ms(procStat(`/proc/${child}/stat`), 11) } catch {}
  }
  const waitMs = Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
  return { waitMs, compressMs }
}

function cacheBytes (pid) {
  const base = path.join(os.tmpdir(), `zcopy-variants-${process.getuid()}`)
  let total = 0
  for (const dir of fs.existsSync(base) ? fs.readdirSync(base) : []) {
    if (!dir.startsWith(`v-${pid}-`)) continue
    for (const name of fs.readdirSync(path.join(base, dir))) total += fs.statSync(path.join(base, dir, name)).size
  }
  return total
}

async function wrk (port) {
  const { stdout } = await run('wrk', ['-t1', '-c16', `-d${seconds}s`, '--latency', '-H', `Accept-Encoding: ${ACCEPT}`, `http://127.0.0.1:${port}/hot.js`])
  const ms = (text) => {
    const [, n, unit] = /([\d.]+)(us|ms|s)/.exec(text)
    return Number(n) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1)
  }
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1]),
    p50: ms(/ 50%\s+(\S+)/.exec(stdout)[1]),
    p99: ms(/ 99%\s+(\S+)/.exec(stdout)[1])
  }
}

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

// `values` → 'median (min–max)', with `digits` decimals.
function spread (values, digits) {
  const f = (n) => n.toFixed(digits)
  return values.length > 1 ? `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})` : f(values[0])
}

async function main () {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-burst-'))
  const big = makeBundle(2 * 1024 * 1024)
  fs.writeFileSync(path.join(root, 'hot.js'), makeBundle())
  fs.mkdirSync(path.join(root, 'new'))
  for (let i = 0; i < FILES; i++) {
    const at = (i * 7919) % (big.length - 65536)
    fs.writeFileSync(path.join(root, 'new', `f${i}.js`), Buffer.concat([Buffer.from(`/* file ${i} */\n`), big.subarray(at, at + 65536 - 20)]))
  }
  const loadBefore = os.loadavg()
  try {
    const rows = Object.fromEntries(SETUPS.map((setup) => [setup, []]))
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? SETUPS : [...SETUPS].reverse()
      for (const setup of order) {
        const row = await session(root, setup)
        rows[setup].push(row)
        console.error(`round ${round + 1} ${setup}: alone ${row.quiet.rps.toFixed(0)} req/s p99 ${row.quiet.p99.toFixed(2)} ms; ` +
          `burst (${row.asked} files in ${row.busy.burstMs.toFixed(0)} ms) ${row.busy.rps.toFixed(0)} req/s p99 ${row.busy.p99.toFixed(2)} ms (${(row.busy.p99 / row.quiet.p99).toFixed(2)}×); ` +
          `main thread waited ${row.quiet.waitMs.toFixed(0)} → ${row.busy.waitMs.toFixed(0)} ms for a CPU, compression ran ${row.busy.compressMs.toFixed(0)} ms; made ${row.made}, RSS ${row.rss.toFixed(0)} MiB`)
      }
    }
    console.log(`# ${new Date().toISOString()} load ${loadBefore.map((n) => n.toFixed(2)).join(' ')} → ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}; ` +
      `zcopy serve; wrk -t1 -c16 -d${seconds}s --latency on the 212 KiB bundle; ${rounds} rounds, alternating; ` +
      `the burst ${pace > 0 ? `paced at ${pace} files/s` : '4 at a time'}; median (min–max)`)
    console.log('| zcopy serve | run | req/s | p50 ms | p99 ms | p99 ÷ alone (per round) | burst lasted, ms | main thread waited for a CPU, ms | compression ran (CPU), ms | variants made | RSS at end | cache folder |')
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const setup of SETUPS) {
      const runs = rows[setup]
      const cells = (key) => [spread(runs.map((r) => r[key].rps), 0), spread(runs.map((r) => r[key].p50), 2), spread(runs.map((r) => r[key].p99), 2)]
      console.log(`| ${setup} | bundle alone | ${cells('quiet').join(' | ')} | | | ${spread(runs.map((r) => r.quiet.waitMs), 0)} | | | | |`)
      console.log(`| ${setup} | while ${spread(runs.map((r) => r.asked), 0)} new 64 KiB files are first asked for | ${cells('busy').join(' | ')} | ` +
        `${spread(runs.map((r) => r.busy.p99 / r.quiet.p99), 2)}× | ${spread(runs.map((r) => r.busy.burstMs), 0)} | ${spread(runs.map((r) => r.busy.waitMs), 0)} | ${spread(runs.map((r) => r.busy.compressMs), 0)} | ${spread(runs.map((r) => r.made), 0)} | ` +
        `${spread(runs.map((r) => r.rss), 0)} MiB | ${spread(runs.map((r) => r.cache / 1048576), 1)} MiB |`)
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

// How many variants the server has made: not told by zcopy serve, so counted
// from the answers: the new files asked for again after the run, compressed.
async function session (root, setup) {
  const compress = !setup.startsWith('no-compress')
  const warm = setup.startsWith('hits')
  const burstAccept = setup.startsWith('no-variants') || warm ? 'identity' : ACCEPT
  const port = await freePort()
  const checkout = setup.endsWith('@base') ? base : path.join(__dirname, '..', '..')
  const argv = [process.execPath, path.join(checkout, 'bin', 'zcopy.js'), 'serve', root, '--port', String(port), '--quiet', ...(compress ? [] : ['--no-compress'])]
  const [command, ...rest] = cpu === null ? argv : ['taskset', '-c', cpu, ...argv]
  const child = spawn(command, rest, { stdio: 'ignore' })
  try {
    for (let i = 0; i < 200; i++) {
      try { await get(port, '/hot.js'); break } catch { await new Promise((resolve) => setTimeout(resolve, 50)) }
    }
    for (let i = 0; compress && i < 400; i++) { // the bundle's variant made
      const headers = await get(port, '/hot.js')
      if (headers['content-encoding']) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    for (let i = 0; warm && i < 2 * FILES; i++) await get(port, `/new/f${i % FILES}.js`, burstAccept)
    await wrk(port) // warm-up
    const quietBefore = schedOf(child.pid)
    const quiet = await wrk(port)
    quiet.waitMs = schedOf(child.pid).waitMs - quietBefore.waitMs
    let asked = 0
    let stop = false
    const started = performance.now()
    let lastAnswer = started
    const ask = () => get(port, `/new/f${asked++}.js`, burstAccept).then(() => { lastAnswer = performance.now() })
    const burst = pace > 0
      ? (async () => {
          const answers = []
          while (!stop && asked < FILES) {
            answers.push(ask())
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + asked * 1000 / pace - performance.now())))
          }
          await Promise.all(answers)
        })()
      : Promise.all(Array.from({ length: 4 }, async () => {
        while (!stop && asked < FILES) await ask()
      }))
    const before = schedOf(child.pid)
    const busy = await wrk(port)
    const after = schedOf(child.pid)
    busy.waitMs = after.waitMs - before.waitMs
    busy.compressMs = after.compressMs - before.compressMs
    stop = true
    await burst
    busy.burstMs = lastAnswer - started
    const rss = rssMiB(child.pid)
    const cache = cacheBytes(child.pid)
    let made = 0
    for (let i = 0; compress && i < asked; i += 10) { // a sample: every tenth file
      if ((await get(port, `/new/f${i}.js`, 'br'))['content-encoding'] === 'br') made += 10
    }
    return { quiet, busy, asked, rss, cache, made }
  } finally {
    child.kill('SIGTERM')
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
