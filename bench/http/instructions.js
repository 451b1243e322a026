'use strict'

// User-space instructions per request, counted by callgrind: a figure that
// reproduces on a noisy machine.
//
//   node bench/http/instructions.js [--servers 'zcopy (node:http),headers floor (6 × setHeader + res.end)']
//                                   [--cases 4k,files-5000] [--requests 10000] [--warm-up 30000]
//                                   [--connections 4] [--repeat 1] [--base DIR]
//                                   [--http2 [--streams 10]]
//
// Why: on a shared 2-core VM a throughput ratio moves ±10 % between runs, while
// the instructions a server executes per request repeat within 0.3–1.5 % (main
// thread, 4 KiB; docs/benchmarks.md), so a change of a few percent in the
// per-request work shows here when run.js can not tell it from noise. What:
// user space only (valgrind sees no kernel code): the system calls' own work,
// sending and receiving, waking the client, is not counted, and neither are
// cache misses or stalls. Instructions are not seconds: this complements the
// throughput ratios of run.js and compare-builds.js, it never replaces them.
//
// How: for each case and server (the kinds of server.js, names as in run.js's
// --servers, and 'zcopy serve': the CLI in one process, --quiet), a fresh server
// runs under `valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes`
// (--smc-check=all-non-file for V8's generated code; server.js's IPC channel
// passes through valgrind). A keep-alive node:http client in this process sends
// --warm-up requests over --connections connections (for a many-files case,
// paths picked as its wrk script picks them, from a PRNG with a fixed seed, so
// every run asks for the same sequence; every answer must be a 200 of the file's
// length), then `callgrind_control -i on`, --requests more requests on fresh
// connections, `-i off` and a dump of every thread. Reported per request: the
// main thread (the dump of valgrind's thread 1, the one the HTTP parser runs
// on, which is checked) and all threads together. Default servers: Node's floor
// (the baseline: the first named is), the six-header floor, zcopy (node:http)
// and zcopy serve; default case 4k. --repeat N runs every measurement N times
// (median, min–max). --base DIR measures another checkout's zcopy too (its lib/
// for the node:http, Express and Fastify kinds, through ZCOPY_BENCH_LIB; its
// bin/zcopy.js for zcopy serve; its node_modules installed and its addon
// built), as rows '… (base)', with a ratio of each zcopy row to its base.
// --http2: 'zcopy serve' only, over TLS 1.3 and HTTP/2 (--ssl-cert with a
// self-signed certificate, --http2), driven by a node:http2 client: each of
// --connections sessions keeps --streams requests in flight (10, as
// compare-builds.js --http2's h2load -m10); the figures then hold TLS's and
// nghttp2's work beside zcopy's.
// nginx is not measured: not a Node process (its worker is a child of the
// master, outside a valgrind that does not trace children).
//
// Caveats. V8 tiers code up as it runs: warm-up decides the figure (about 66k
// for Node's floor at 4 KiB after 30,000 requests, 115k after 3,000), so compare
// figures taken with the same --warm-up and --requests only. The all-threads
// figure includes V8's concurrent compiler and garbage collector threads (and
// libuv's pool when a server uses it): work that may run on an idle core, which
// the main-thread figure leaves out, and whose share varies from run to run (now
// and then a run several percent off). Callgrind runs Node some 30 to 80 times
// slower (the progress lines give the counted requests per second: a few
// hundred, against some 20,000 natively) while clocks keep real time, so what a
// server does per second is charged to that many times fewer requests, and what
// it does to what went unused for a while happens far more often: zcopy's
// open-file cache closes the files unused over its 10 s sweep period; at 333
// requests/s that was half of files-5000's 5,000 files, and about one counted
// request in five reopened its file (natively none does), a figure that moves
// with the machine's pace (149k–234k in twelve runs). files-100 keeps every file
// in use. One measurement takes about a minute at the defaults.
//
// Bad options, or valgrind missing: one line on stderr, exit code 2. Ctrl-C
// (SIGINT, or SIGTERM) stops the server and callgrind_control, removes the
// temporary files (served files, dumps, vgdb's FIFOs), then exits 130 (143).

const { execFile, spawnSync } = require('node:child_process')
const http = require('node:http')
const http2 = require('node:http2')
const { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } = require('node:fs')
const { constants, tmpdir } = require('node:os')
const { join, resolve } = require('node:path')
const { parseArgs, promisify } = require('node:util')
const { helpIfAsked } = require('../lib/usage')
const { selectCases, isFileCase, prepareCase } = require('./cases')
const { binaryOf } = require('./compare-builds')
const { machineLine } = require('./machine')
const { pathPicker } = require('./many-files')
const { KINDS, startServer } = require('./server')
const { withSpread } = require('./stats')
const { row, header, LABELS, SHORT } = require('./table')
const { makeCertificate } = require('./tls')
const { startZcopyServe } = require('./zcopy-serve')

const run = promisify(execFile)

const CHECKOUT = join(__dirname, '..', '..')
const ZCOPY_SERVE = 'zcopy serve'
const DEFAULT_SERVERS = ['node:http res.end(buffer)', 'headers floor (6 × setHeader + res.end)', 'zcopy (node:http)', ZCOPY_SERVE]
const SEED = 1 // the many-files cases' path sequence
const INSTALL = 'apt-get install valgrind'

// Bad options: one line on stderr, exit code 2.
function usage (message) {
  console.error(`bench/http/instructions.js: ${message.replace(/\n/g, ' ')}`) // parseArgs' can take three lines
  process.exit(2)
}

function count (values, name, min) {
  const n = Number(values[name])
  if (!(Number.isInteger(n) && n >= min)) usage(`--${name} takes a whole number from ${min}, not '${values[name]}'`)
  return n
}

function options () {
  helpIfAsked(__filename)
  let values
  try {
    ({ values } = parseArgs({
      options: {
        servers: { type: 'string' },
        cases: { type: 'string', default: '4k' },
        requests: { type: 'string', default: '10000' },
        'warm-up': { type: 'string', default: '30000' },
        connections: { type: 'string', default: '4' },
        repeat: { type: 'string', default: '1' },
        base: { type: 'string' },
        http2: { type: 'boolean', default: false },
        streams: { type: 'string' }
      }
    }))
    values.cases = selectCases({ cases: values.cases })
  } catch (err) {
    usage(err.message)
  }
  const servers = values.servers === undefined ? DEFAULT_SERVERS : values.servers.split(',').map((name) => name.trim()).filter(Boolean)
  if (values.http2 && servers.some((name) => name !== ZCOPY_SERVE)) usage("--http2: 'zcopy serve' only (--servers 'zcopy serve')")
  if (values.streams !== undefined && !values.http2) usage('--streams: with --http2 only')
  if (values.streams === undefined) values.streams = '10'
  if (servers.includes('nginx')) usage("--servers: nginx is not measured here (not a Node process: its worker is the master's child, outside valgrind); the Node kinds and 'zcopy serve' are")
  const known = [...KINDS, ZCOPY_SERVE]
  const unknown = servers.filter((name) => !known.includes(name))
  if (unknown.length) usage(`--servers: unknown ${unknown.map((name) => `'${name}'`).join(', ')}; known: ${known.join(', ')}`)
  if (servers.length === 0) usage('--servers names no server')
  if (new Set(servers).size !== servers.length) usage('--servers names a server twice')
  const base = values.base === undefined ? null : resolve(values.base)
  if (base !== null) {
    if (!servers.some(isZcopy)) usage('--base: none of --servers is a zcopy kind, so nothing of DIR would run')
    for (const file of requiredOf(servers)) {
      if (!existsSync(join(base, file))) usage(`--base ${base}: no ${file} (--base takes another zcopy checkout)`)
    }
  }
  return {
    servers,
    cases: values.cases,
    requests: count(values, 'requests', 1),
    warmUp: count(values, 'warm-up', 0),
    connections: count(values, 'connections', 1),
    repeat: count(values, 'repeat', 1),
    base,
    http2: values.http2,
    streams: count(values, 'streams', 1)
  }
}

function isZcopy (kind) {
  return kind.startsWith('zcopy')
}

// What --base DIR must hold for these servers.
function requiredOf (servers) {
  return [
    ...(servers.some((kind) => isZcopy(kind) && kind !== ZCOPY_SERVE) ? [join('lib', 'index.js')] : []),
    ...(servers.includes(ZCOPY_SERVE) ? [join('bin', 'zcopy.js')] : [])
  ]
}

// valgrind and callgrind_control answer, or a usage error saying how to get them.
function checkValgrind () {
  const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' })
  if (valgrind.error) usage(`valgrind is not installed (${INSTALL}): it counts the instructions`)
  if (spawnSync('callgrind_control', ['--version']).error) usage(`callgrind_control is not installed (${INSTALL}; it comes with valgrind)`)
  return valgrind.stdout.trim()
}

// The argv prefix that runs a server under callgrind, its files in `dir`: the
// dumps (callgrind.out.<part>-<thread>), valgrind's own messages and the FIFOs
// through which callgrind_control talks to it.
function callgrindPrefix (dir) {
  return ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', '--separate-threads=yes',
    `--callgrind-out-file=${join(dir, 'callgrind.out')}`, `--vgdb-prefix=${join(dir, 'vgdb')}`, `--log-file=${join(dir, 'valgrind.log')}`]
}

// `callgrind_control ARGS pid`, which exits 0 whether or not it reached the process.
async function callgrindControl (pid, dir, args, signal) {
  const { stdout } = await run('callgrind_control', [`--vgdb-prefix=${join(dir, 'vgdb')}`, ...args, String(pid)], { signal })
  if (!/^\s*OK\.$/m.test(stdout)) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${stdout.trim()}`)
}

// → null when an answer to GET `path` is a 200 of `size` bytes, else the error.
function wrongAnswer (path, status, bytes, size) {
  return status === 200 && bytes === size ? null : new Error(`GET ${path}: ${status} with ${bytes} bytes, not 200 with ${size}`)
}

// GET `path` over HTTP/1.1, which must answer 200 with `size` bytes.
function get (agent, port, path, size, signal) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent, signal }, (res) => {
      let bytes = 0
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('error', reject)
      res.on('end', () => {
        const error = wrongAnswer(path, res.statusCode, bytes, size)
        if (error === null) resolve()
        else reject(error)
      })
    }).on('error', reject)
  })
}

// The same as a stream of an HTTP/2 `session`.
function getHttp2 (session, path, size) {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': path })
    let status = 0
    let bytes = 0
    req.on('response', (headers) => { status = headers[':status'] })
    req.on('data', (chunk) => { bytes += chunk.length })
    req.on('error', reject)
    req.on('end', () => {
      const error = wrongAnswer(path, status, bytes, size)
      if (error === null) resolve()
      else reject(error)
    })
  })
}

// `requests` requests, made by one loop per element of `lanes`, each loop one
// request at a time (`one(lane, path)`, `next()` naming each path); the first
// failure stops every loop.
async function inLanes ({ requests, lanes, next, one }) {
  let sent = 0
  const loop = async (lane) => {
    while (sent < requests) {
      sent++
      try {
        await one(lane, next())
      } catch (err) {
        sent = requests // the other loops stop too
        throw err
      }
    }
  }
  await Promise.all(lanes.map(loop))
}

// `requests` GETs over `connections` keep-alive connections (new ones), each
// connection one request at a time; `next()` names each request's path.
async function drive ({ port, requests, connections, next, sizeOf, signal }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  try {
    await inLanes({ requests, lanes: Array(Math.min(connections, requests)).fill(agent), next, one: (lane, path) => get(lane, port, path, sizeOf(path), signal) })
  } finally {
    agent.destroy()
  }
}

// The same over HTTP/2: `connections` sessions (new ones), each with
// `streams` requests in flight.
async function driveHttp2 ({ port, requests, connections, streams, next, sizeOf, signal }) {
  const sessions = Array.from({ length: Math.min(connections, requests) }, () =>
    http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false }))
  const abort = () => { for (const session of sessions) session.destroy(signal.reason) }
  signal.addEventListener('abort', abort, { once: true })
  try {
    const lanes = sessions.flatMap((session) => Array(streams).fill(session))
    await inLanes({ requests, lanes, next, one: (session, path) => getHttp2(session, path, sizeOf(path)) })
  } finally {
    signal.removeEventListener('abort', abort)
    for (const session of sessions) session.close()
  }
}

// The per-thread dumps of part 1 in `dir` → [{ thread, total, parser }], the
// main thread first. Checked: its file is -01, callgrind calls it thread 1
// (valgrind's first thread, which runs main()), and the HTTP parser (llhttp) ran
// on no other thread; `parser`: it was seen on this one (a node binary without
// llhttp's symbols shows it nowhere).
function readDumps (dir) {
  const dumps = readdirSync(dir)
    .map((name) => /^callgrind\.out\.1-(\d+)$/.exec(name))
    .filter(Boolean)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map(([name, number]) => {
      const text = readFileSync(join(dir, name), 'latin1')
      const total = /^totals: (\d+)$/m.exec(text)
      if (!total) throw new Error(`callgrind dump ${name} has no totals line`)
      return { name, number, thread: Number(/^thread: (\d+)$/m.exec(text)?.[1]), total: Number(total[1]), parser: /^c?fn=\(\d+\) llhttp/m.test(text) }
    })
  if (dumps.length === 0) throw new Error('callgrind wrote no dump')
  const [main, ...others] = dumps
  if (main.number !== '01' || main.thread !== 1) throw new Error(`the first callgrind dump is ${main.name} (thread ${main.thread}), not -01 of thread 1`)
  const parsers = others.filter((dump) => dump.parser)
  if (parsers.length) throw new Error(`the HTTP parser ran on thread ${parsers.map((dump) => dump.thread).join(', ')}: thread 1 is not the only main thread`)
  return dumps
}

// Starts `kind` (from this checkout, or from `base`) under `wrap`; `tls`:
// zcopy serve's certificate ({ cert, key, http2 }) or null.
function start ({ kind, base, root, wrap, signal, tls }) {
  if (kind === ZCOPY_SERVE) return startZcopyServe(root, 1, { wrap, signal, tls, ...(base && { cli: join(base, 'bin', 'zcopy.js') }) })
  return startServer(kind, root, { wrap, signal, env: base ? { ZCOPY_BENCH_LIB: join(base, 'lib') } : {} })
}

// One measurement: a fresh server under callgrind, the warm-up, then the
// counted requests → { main, all, threads } (instructions per request).
async function measureOnce ({ kind, base, root, target, name, requests, warmUp, connections, streams, tls, work, signal }) {
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work)
  let server = null
  try {
    try {
      server = await start({ kind, base, root, wrap: callgrindPrefix(work), signal, tls })
    } catch (err) {
      if (!signal.aborted) err.message += valgrindLog(work)
      throw err
    }
    const sizes = new Map()
    const sizeOf = (path) => sizes.get(path) ?? sizes.set(path, statSync(join(root, path)).size).get(path)
    const next = isFileCase(name) ? pathPicker(name, SEED) : () => target.path
    const load = (count) => (tls === null ? drive : driveHttp2)({ port: server.port, requests: count, connections, streams, next, sizeOf, signal })
    await load(warmUp)
    await callgrindControl(server.pid, work, ['--instr=on'], signal)
    const started = process.hrtime.bigint()
    await load(requests)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    await callgrindControl(server.pid, work, ['--instr=off'], signal)
    await callgrindControl(server.pid, work, ['--dump'], signal)
    const dumps = readDumps(work)
    const all = dumps.reduce((sum, dump) => sum + dump.total, 0)
    return { main: dumps[0].total / requests, all: all / requests, threads: dumps.length, parserSeen: dumps[0].parser, pace: requests / seconds }
  } finally {
    await server?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

// valgrind's own messages but its banner and totals, for a server that did not start.
const VALGRIND_BANNER = /^(Callgrind, a call-graph|Copyright \(C\)|Using Valgrind|Command:|Parent PID:|For interactive control|Events +:|Collected +:|I +refs:)/

function valgrindLog (dir) {
  let text
  try {
    text = readFileSync(join(dir, 'valgrind.log'), 'utf8')
  } catch {
    return ''
  }
  const lines = text.split('\n').map((line) => line.replace(/^==\d+== ?/, '')).filter((line) => line && !VALGRIND_BANNER.test(line)).slice(-12)
  return lines.length ? `; valgrind's log ends:\n  ${lines.join('\n  ')}` : ''
}

// The command as typed, quoted for a shell where needed.
function commandLine () {
  const quote = (arg) => (/^[\w./,:=@-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`)
  return ['node', 'bench/http/instructions.js', ...process.argv.slice(2)].map(quote).join(' ')
}

function label (row) {
  return row.base ? `${LABELS[row.kind] ?? row.kind} (base)` : LABELS[row.kind] ?? row.kind
}

function short (row) {
  return `${SHORT[row.kind] ?? row.kind}${row.base ? ' (base)' : ''}`
}

// Thousands, one decimal: `94.0`, or `94.0 (93.8–94.2)` over several runs.
function formatThousands (values) {
  return withSpread(values.map((value) => value / 1000), (value) => value.toFixed(1))
}

// Per-run ratios (run i of one row to run i of the other): `1.435×` or `1.435× (1.431–1.440)`.
function formatRatio (runs, baseRuns, field) {
  return withSpread(runs.map((run, i) => run[field] / baseRuns[i][field]), (ratio) => ratio.toFixed(3), '×')
}

function printTable (results, cases, rows, repeat) {
  const runs = (name, row) => results[name][row.key]
  const columns = cases.flatMap((name) => [`${name}: main thread`, `${name}: all threads`])
  const of = repeat > 1 ? `, median (min–max) of ${repeat} runs` : ''
  console.log(`\n${header(`thousand instructions per request${of}`, columns)}`)
  for (const r of rows) {
    console.log(row(label(r), cases.flatMap((name) => ['main', 'all'].map((field) => formatThousands(runs(name, r).map((run) => run[field]))))))
  }
  const ratio = (r, to) => row(`${short(r)} ÷ ${short(to)}`, cases.flatMap((name) => ['main', 'all'].map((field) => formatRatio(runs(name, r), runs(name, to), field))))
  // Each row to the baseline (the first server named; its own base row is in
  // the next group), then each zcopy row of this checkout to its base.
  const [baseline] = rows
  for (const r of rows.filter((r) => r.kind !== baseline.kind)) console.log(ratio(r, baseline))
  for (const r of rows.filter((r) => r.base)) console.log(ratio(rows.find((own) => own.kind === r.kind && !own.base), r))
}

async function main (signal) {
  const { servers, cases, requests, warmUp, connections, repeat, base, http2: overHttp2, streams } = options()
  const valgrind = checkValgrind()
  delete process.env.ZCOPY_NATIVE // the addon is measured, never the pure-JS fallback
  const addons = {}
  if (servers.some(isZcopy)) {
    for (const [side, dir] of [['this checkout', CHECKOUT], ...(base ? [[`--base ${base}`, base]] : [])]) {
      try {
        addons[side] = binaryOf({ cwd: dir, env: {} })
      } catch { // no lib/engine/binding.js (lib/binding.js), or its dependencies not installed
        addons[side] = null
      }
      if (addons[side] === null) usage(`${side}: no zcopy addon loads from it (build it with npm run build; an older checkout, with binding.gyp at its root: npx node-gyp rebuild; its node_modules installed)`)
    }
  }
  const rows = servers.flatMap((kind) => [{ kind, base: null }, ...(base && isZcopy(kind) ? [{ kind, base }] : [])])
    .map((r) => ({ ...r, key: r.base ? `${r.kind} (base)` : r.kind }))
  console.log(`# ${commandLine()}`)
  console.log(machineLine())
  console.log(`${valgrind} --tool=callgrind, user-space instructions only: ${requests.toLocaleString('en-US')} requests counted after ` +
    `${warmUp.toLocaleString('en-US')} warm-up requests, ${connections} ${overHttp2 ? `HTTP/2 session${connections > 1 ? 's' : ''} over TLS 1.3, ${streams} stream${streams > 1 ? 's' : ''} each (node:http2 client)` : `keep-alive connection${connections > 1 ? 's' : ''} (node:http client)`}, ` +
    `a fresh server per measurement; baseline: ${short(rows[0])}`)
  for (const [side, addon] of Object.entries(addons)) console.log(`${side}: addon ${addon}`)
  const total = repeat * cases.length * rows.length
  console.log(`${total} measurement${total > 1 ? 's' : ''}, about ${Math.ceil(total * (5 + warmUp * 0.001 + requests * 0.003) / 60)} min\n`)

  const dir = mkdtempSync(join(tmpdir(), 'zcopy-instructions-'))
  const tls = overHttp2 ? { ...makeCertificate(), http2: true } : null
  try {
    const root = join(dir, 'files')
    mkdirSync(root)
    const targets = Object.fromEntries(cases.map((name) => [name, prepareCase(root, name)]))
    const results = Object.fromEntries(cases.map((name) => [name, Object.fromEntries(rows.map((r) => [r.key, []]))]))
    const caseWidth = Math.max(...cases.map((name) => name.length))
    const rowWidth = Math.max(...rows.map((r) => r.key.length))
    for (let round = 1; round <= repeat; round++) {
      for (const name of cases) {
        for (const r of rows) {
          const result = await measureOnce({
            kind: r.kind, base: r.base, root, target: targets[name], name, requests, warmUp, connections, streams, tls, work: join(dir, 'callgrind'), signal
          })
          results[name][r.key].push(result)
          console.log(`run ${round}/${repeat}  ${name.padEnd(caseWidth)}  ${r.key.padEnd(rowWidth)}  ` +
            `main thread ${(result.main / 1000).toFixed(1)}k, all ${result.threads} threads ${(result.all / 1000).toFixed(1)}k instructions/request ` +
            `(counted at ${Math.round(result.pace)} requests/s)`)
        }
      }
    }
    printTable(results, cases, rows, repeat)
    const runs = Object.values(results).flatMap((byRow) => Object.values(byRow).flat())
    if (!runs.every((run) => run.parserSeen)) console.log("\nnote: llhttp's functions were not named in the main thread's dump (a stripped node?): valgrind's thread 1 was taken as the main thread unchecked")
  } finally {
    tls?.remove()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Ctrl-C (or SIGTERM): the running server, callgrind_control and requests are
// aborted, the temporary files removed, then exit 128 + the signal's number.
const controller = new AbortController()
let stoppedBy = null
for (const name of ['SIGINT', 'SIGTERM']) {
  process.once(name, () => {
    stoppedBy = name
    controller.abort()
  })
}

main(controller.signal).catch((err) => {
  if (stoppedBy) {
    console.error(`bench/http/instructions.js: stopped by ${stoppedBy}`)
    process.exitCode = 128 + constants.signals[stoppedBy]
  } else {
    console.error(`bench/http/instructions.js: ${err.message}`) // a server's own error went to stderr before
    process.exitCode = 1
  }
}).then(() => {
  if (stoppedBy && !process.exitCode) process.exitCode = 128 + constants.signals[stoppedBy]
})
