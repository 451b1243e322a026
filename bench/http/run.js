'use strict'

// HTTP benchmark: the same files from zcopy and its peers, side by side in one run
// (this machine is noisy: compare ratios, not absolute figures).
//
//   node bench/http/run.js [--seconds 5] [--rounds 3] [--cases 4k,64k,1m,100m,files-100,files-5000,files-5000-zipf,revalidate-4k,compressed]
//                          [--sizes 4k,64k,1m,100m] [--connections 16] [--tls] [--no-memory] [--workers N]
//                          [--servers 'zcopy serve,zcopy (node:http),nginx'] [--warm-up SECONDS] [--bytes] [--pin] [--pipeline N]
//
// --cases: what is measured (default all; `sizes` and `files` name the groups).
// The sizes are one file each; files-100 and files-5000 are that many 4 KiB files
// in subdirectories, requested uniformly at random, files-5000-zipf the 5000 with
// Zipf-like popularity (wrk Lua script; skipped under autocannon). --sizes alone
// selects those sizes only, as before; with --cases it narrows the sizes.
// revalidate-4k: the 4 KiB file asked for with If-None-Match set to the ETag
// each server gave it in one plain GET before the run (revalidate.js; wrk Lua,
// skipped under autocannon), so that every answer is a 304; one request checks
// that it is, and a cell says so when it is not (a server without ETags is
// sent its Last-Modified in If-Modified-Since, as a browser does; Bun's is).
// compressed: a 212 KiB JavaScript bundle asked for with a browser's
// Accept-Encoding (gzip, deflate, br), served by its own set of servers (those
// of compressed.js, compressed-servers.js): zcopy serve with its defaults
// (compress on) on a folder without .br/.gz siblings, with and without
// its native lane, against nginx gzip_static,
// h2o file.send-compressed and Caddy precompressed with siblings built
// beforehand (each skipped with a note when missing); zcopy serve is warmed up until its variant is made. It
// has a table of its own; it needs wrk (the header is set by a Lua script) and
// runs neither with --tls nor --workers, nor with --servers unless --cases
// names it.
//
// Each server runs in its own child process, a fresh one for every case and
// round, warmed up for 1 s (3 s for the many-files cases; --warm-up sets it for
// every case: a fresh zcopy looks each of 5,000 files up on its first request,
// so a longer warm-up measures its steady state instead); the load comes from
// another (wrk -t1 -c16 when installed, else autocannon). The native peers join
// when they are there (else a note says why not): nginx, tuned as a production
// static server (nginx.js: sendfile, tcp_nopush, open_file_cache, access_log
// off, one worker); h2o tuned alike (h2o.js: no access log, ETags,
// num-threads 1; it has no lasting open-file cache to turn on); Bun (bun.js, bun-server.js: Bun.serve with a
// route per file, each a Bun.file Response, answered in Bun's native code, in
// one process; the binary from the npm registry, pinned, fetched once into
// node_modules/.cache); Caddy (caddy.js: file_server, no access log,
// GOMAXPROCS=1).
// --connections 1,16,256: each case at each count (a column per pair).
// --tls: every server over TLS 1.3 with one self-signed certificate (tls.js);
// no memory check.
// The servers alternate: round 1 runs every kind once per case, then round 2…
// --workers N: every core, as deployed. zcopy serve (the CLI, --workers N), sirv
// in a node:cluster of N, nginx with worker_processes N, h2o with num-threads N,
// Bun in N processes on the port (reusePort) and Caddy with GOMAXPROCS=N,
// loaded by wrk -tN (same connections); no memory check. --workers 1 is the single-process CLI.
// --servers: only these (names as in the table; 'zcopy serve' is the CLI,
// with its native lane, in every worker with --workers; 'zcopy serve
// --no-native-lane' the same without it, which does not run with --tls, where
// the lane is off anyway), each zcopy row then
// compared with each other server.
// --bytes (wrk only): rank by MiB/s received (heads and bodies, whole or not)
// instead of whole responses per second, CPU per MiB received: for runs in which
// few responses complete (100 MiB at 256 connections: a server that shares its
// bandwidth fairly completes none in seconds, one that does not completes some).
// --pin (Linux, 2 CPUs or more, taskset): each server's processes and threads on
// CPU 0, the load generator on CPU 1 (pin.js), so that a server that needs less
// CPU per request shows it in requests per second rather than leaving its
// share to the generator; not with --workers.
// --pipeline N: each connection writes N requests at once and the next N once
// all are answered, as a pipelining client (TechEmpower's plaintext test, 16):
// the load generator's cost per request falls, so on a small machine the
// server rather than the generator sets the pace. One-file and revalidate
// cases only (the many-files scripts pick each request's path).
// Prints the machine, a markdown table of req/s (median, min–max over the rounds)
// with ratios from the medians, one of the server's CPU time per request (Linux,
// median round), one of the load generator's, then the memory check.

const { randomInt } = require('node:crypto')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { BUN_VERSION, bunBinary, startBun } = require('./bun')
const { caddyInstalled, caddyVersion, startCaddy } = require('./caddy')
const { FILE_CASE_WARM_UP_SECONDS, selectCases, isCompressedCase, isFileCase, isRevalidateCase, prepareCase } = require('./cases')
const { SERVERS: COMPRESSED_KINDS, runnable: compressedRunnable, untilCompressed } = require('./compressed-servers')
const { cpuTime, perRequest } = require('./cpu')
const { freePort } = require('./free-port')
const { h2oInstalled, h2oVersion, startH2o } = require('./h2o')
const { measure, loadTool, wrkInstalled } = require('./load')
const { machineLine } = require('./machine')
const { makeCertificate } = require('./tls')
const { measureMemory } = require('./memory')
const { pinServer, pinningUnavailable } = require('./pin')
const { nginxInstalled, startNginx } = require('./nginx')
const { prepareRevalidation } = require('./revalidate')
const { KINDS, FLOORS, OPT_IN, startServer } = require('./server')
const { formatNumber } = require('./stats')
const { BYTES, REQUESTS, printTables, formatCpu, ZCOPY } = require('./table')
const { startZcopyServe } = require('./zcopy-serve')
const { helpIfAsked } = require('../lib/usage')

const CONNECTIONS = 16
const MAX_WORKERS = 16
const ZCOPY_SERVE = 'zcopy serve'
const ZCOPY_NODE = 'zcopy serve --no-native-lane'
const WARM_UP_SECONDS = 1

// Bad options: one line on stderr, exit code 2.
function usage (message) {
  console.error(`bench/http/run.js: ${message}`)
  process.exit(2)
}

function options () {
  helpIfAsked(__filename)
  let values
  try {
    ({ values } = parseArgs({
      options: {
        seconds: { type: 'string', default: '5' },
        rounds: { type: 'string', default: '3' },
        cases: { type: 'string' },
        sizes: { type: 'string' },
        connections: { type: 'string', default: String(CONNECTIONS) },
        tls: { type: 'boolean', default: false },
        'no-memory': { type: 'boolean', default: false },
        workers: { type: 'string' },
        servers: { type: 'string' },
        'warm-up': { type: 'string' },
        bytes: { type: 'boolean', default: false },
        pin: { type: 'boolean', default: false },
        pipeline: { type: 'string', default: '1' }
      }
    }))
    values.casesGiven = values.cases !== undefined
    values.cases = selectCases(values, { revalidate: true, compressed: true })
  } catch (err) {
    usage(err.message)
  }
  const seconds = Number(values.seconds)
  const rounds = Number(values.rounds)
  if (!(seconds > 0)) usage(`--seconds takes a positive number, not '${values.seconds}'`)
  if (!(Number.isInteger(rounds) && rounds > 0)) usage(`--rounds takes a positive whole number, not '${values.rounds}'`)
  const warmUp = values['warm-up'] === undefined ? null : Number(values['warm-up'])
  if (warmUp !== null && !(Number.isInteger(warmUp) && warmUp > 0)) usage(`--warm-up takes a whole number of seconds from 1, not '${values['warm-up']}'`)
  if (values.bytes && !wrkInstalled) usage('--bytes needs wrk, which is not installed')
  const workers = values.workers === undefined ? null : Number(values.workers)
  if (workers !== null && !(Number.isInteger(workers) && workers > 0 && workers <= MAX_WORKERS)) {
    usage(`--workers takes a whole number from 1 to ${MAX_WORKERS}, not '${values.workers}'`)
  }
  const connections = values.connections.split(',').map((text) => text.trim())
  for (const text of connections) {
    const count = Number(text)
    if (!(Number.isInteger(count) && count >= (workers ?? 1) && count <= 10000)) {
      usage(`--connections takes whole numbers from ${workers ?? 1} (one per load thread) to 10000, not '${text}'`)
    }
  }
  const pipeline = Number(values.pipeline)
  if (!(Number.isInteger(pipeline) && pipeline >= 1 && pipeline <= 1000)) usage(`--pipeline takes a whole number from 1 to 1000, not '${values.pipeline}'`)
  if (pipeline > 1 && values.cases.some((name) => isFileCase(name) || isCompressedCase(name))) usage('--pipeline runs the one-file and revalidate cases only')
  if (values.pin && workers !== null) usage('--pin runs without --workers (the server is pinned to one CPU)')
  const unpinnable = values.pin ? pinningUnavailable() : null
  if (unpinnable !== null) usage(`--pin ${unpinnable}`)
  const compressed = values.cases.filter(isCompressedCase)
  if (values.casesGiven && compressed.length > 0 && (values.tls || workers !== null)) {
    usage('--cases compressed runs neither with --tls nor with --workers')
  }
  return {
    cases: values.cases,
    casesGiven: values.casesGiven,
    seconds,
    rounds,
    warmUp,
    connections: connections.map(Number),
    tls: values.tls,
    memory: !values['no-memory'] && workers === null && !values.tls,
    workers,
    servers: values.servers === undefined ? null : values.servers.split(',').map((name) => name.trim()),
    pinned: values.pin,
    pipeline,
    unit: values.bytes ? BYTES : REQUESTS
  }
}

// The native peers: name in the tables → how it starts on a port it is told.
const NATIVE = { nginx: startNginx, h2o: startH2o, Bun: startBun, Caddy: startCaddy }

// → for each native peer, null when it can run here, else why not (Bun is
// fetched here, once, when `wanted` names it).
function nativeAvailability (wanted) {
  return {
    nginx: nginxInstalled() ? null : 'not installed',
    h2o: h2oInstalled() ? null : 'not installed',
    Bun: wanted.includes('Bun') ? (bunBinary().reason ?? null) : 'not asked for',
    Caddy: caddyInstalled() ? null : 'not installed'
  }
}

// → { port, pid, stop() } for a Node server kind, zcopy serve or a native peer,
// on `workers` processes; `tls`: { cert, key } (paths) or null.
async function start (kind, root, workers, tls, target) {
  if (target.servers !== undefined) { // the compressed case's own servers
    const name = target.servers[kind]
    const port = await freePort()
    const server = await COMPRESSED_KINDS[name].start(target.folders[COMPRESSED_KINDS[name].folder], port)
    return { port, pid: server.pid, stop: () => server.stop(), name }
  }
  if (kind in NATIVE) {
    const port = await freePort()
    const server = await NATIVE[kind](root, port, workers, tls)
    return { port, pid: server.pid, stop: () => server.stop() }
  }
  if (kind === ZCOPY_SERVE) return startZcopyServe(root, workers, { tls })
  if (kind === ZCOPY_NODE) return startZcopyServe(root, workers, { tls, args: ['--no-native-lane'] })
  return startServer(kind, root, { workers, tls })
}

// → the cases to run, after dropping the many-files ones and the compressed one
// when wrk is missing.
function withoutWrk (cases) {
  const needWrk = (name) => isFileCase(name) || isCompressedCase(name) || isRevalidateCase(name)
  if (wrkInstalled || !cases.some(needWrk)) return cases
  console.log(`no wrk: ${cases.filter(needWrk).join(', ')} skipped (they need a wrk Lua script)`)
  return cases.filter((name) => !needWrk(name))
}

// → the cases to run, without the compressed one when it was not asked for by
// name and the run is one it does not fit (--tls, --workers, --servers).
function withoutCompressed (cases, { casesGiven, tls, workers, servers }) {
  if (casesGiven || !cases.some(isCompressedCase) || (!tls && workers === null && servers === null)) return cases
  return cases.filter((name) => !isCompressedCase(name))
}

// The compressed case's servers that can run here (the others are named once).
function compressedKinds (target) {
  return Object.keys(target.servers).filter((kind) => compressedRunnable(target.servers[kind]))
}

// The seconds of load before a case's measured run: --warm-up, else the case's
// own, else WARM_UP_SECONDS.
function warmUpOf (target, warmUp) {
  return warmUp ?? target.warmUpSeconds ?? WARM_UP_SECONDS
}

// One measurement of `kind` on a case at a connection count: fresh server,
// warm-up, then the load (one load thread per server worker).
async function runOnce (kind, root, target, { seconds, warmUp, workers, connections, tls, unit, pinned, pipeline }) {
  const server = await start(kind, root, workers, tls, target)
  try {
    if (pinned) pinServer(server.pid)
    const url = `${tls ? 'https' : 'http'}://127.0.0.1:${server.port}${target.path ?? '/'}`
    // The revalidate case: this server's own validator, sent with every request.
    const { script, note } = target.revalidate ? await prepareRevalidation(url, join(root, 'revalidate.lua')) : { script: target.script, note: null }
    const load = (duration) => measure(url, { threads: workers, connections, seconds: duration, script, args: [randomInt(1, 2 ** 31)], pinned, pipeline })
    // The compressed case: zcopy's variant made first (its first answer is the
    // file itself); what a browser gets is reported.
    const made = server.name === undefined ? null : await untilCompressed(server.name, server.port)
    await load(warmUpOf(target, warmUp)) // caches, JIT
    const before = cpuTime(server.pid)
    const result = await load(seconds)
    const count = unit.count(result)
    return {
      rate: unit.rateOf(result, seconds),
      cpu: perRequest(before, cpuTime(server.pid), count),
      clientCpu: result.cpu && perRequest({ user: 0, system: 0 }, result.cpu, count),
      errors: result.errors,
      note,
      body: made && { encoding: made.answer.encoding, bytes: made.answer.bytes, readyMs: made.readyMs }
    }
  } finally {
    await server.stop()
  }
}

async function main () {
  const { cases: selected, casesGiven, seconds, rounds, warmUp, connections, tls, memory, workers, servers, pinned, pipeline, unit } = options()
  const known = [...KINDS, ZCOPY_SERVE, ZCOPY_NODE, ...Object.keys(NATIVE)]
  const unknown = (servers ?? []).filter((name) => !known.includes(name))
  if (unknown.length) usage(`--servers: unknown ${unknown.map((n) => `'${n}'`).join(', ')}; known: ${known.join(', ')}`)
  // The lane turns itself off under TLS: this row would be zcopy serve's.
  if (servers?.includes(ZCOPY_NODE) && tls) usage(`--servers '${ZCOPY_NODE}' does not run with --tls (the lane is off there)`)
  // The native peers by these names run in the plain cases only (the compressed
  // case has servers of its own): Bun is not fetched for a compressed run.
  const plain = selected.some((name) => !isCompressedCase(name))
  const why = nativeAvailability(plain ? servers ?? Object.keys(NATIVE) : [])
  const natives = Object.keys(NATIVE).filter((name) => why[name] === null)
  const missing = (servers ?? Object.keys(NATIVE)).filter((name) => name in NATIVE && why[name] !== null)
  if (servers && plain && missing.length) usage(`--servers names ${missing.map((name) => `${name}, which is ${name === 'Bun' ? `not there (${why.Bun})` : 'not installed'}`).join('; ')}`)
  const kinds = servers ?? (workers === null
    ? [...KINDS.filter((kind) => !FLOORS.includes(kind) && !OPT_IN.includes(kind)), ...natives, ...FLOORS]
    : [ZCOPY_SERVE, 'sirv', ...natives])
  // Each peer's version, when it serves in this run.
  const serving = (name, compressedName) => (plain && kinds.includes(name)) || (selected.some(isCompressedCase) && compressedName !== undefined && compressedRunnable(compressedName))
  console.log(machineLine([
    ...(serving('h2o', 'h2o-send-compressed') ? [`h2o ${h2oVersion()}`] : []),
    ...(serving('Bun') ? [`Bun ${BUN_VERSION}`] : []),
    ...(serving('Caddy', 'caddy-precompressed') ? [`Caddy ${caddyVersion()}`] : [])
  ]))
  const cases = withoutWrk(withoutCompressed(selected, { casesGiven, tls, workers, servers }))
  if (cases.length === 0) return console.log('nothing to measure')
  const threads = workers ?? 1
  if (workers !== null) {
    console.log(`${workers} worker${workers > 1 ? 's' : ''} each: zcopy serve --workers ${workers} (the CLI), ` +
      `sirv ${workers > 1 ? `in a node:cluster of ${workers}` : 'in one process'}, nginx worker_processes ${workers}`)
    const more = {
      h2o: `h2o num-threads ${workers}`,
      Bun: `Bun ${workers > 1 ? `in ${workers} processes on the port (reusePort)` : 'in one process'}`,
      Caddy: `Caddy GOMAXPROCS=${workers}`
    }
    const others = natives.filter((name) => name in more && kinds.includes(name))
    if (others.length) console.log(`  and ${others.map((name) => more[name]).join(', ')}`)
  }
  const connectionsText = connections.length > 1 ? `-c${connections.join('/')}` : `-c${connections[0]}`
  console.log(`load: ${loadTool}${loadTool === 'wrk' ? ` -t${threads}` : threads > 1 ? ` -w ${threads}` : ''} ${connectionsText}` +
    `${tls ? ' over TLS 1.3 (one self-signed P-256 certificate)' : ''}, ${seconds}s per run after a ${warmUp ?? WARM_UP_SECONDS}s warm-up` +
    `${warmUp === null && cases.some(isFileCase) ? ` (${FILE_CASE_WARM_UP_SECONDS}s for the many-files cases)` : ''}, ` +
    `${rounds} round${rounds > 1 ? 's' : ''}, a fresh server per run, the servers alternating` +
    `${pinned ? '; each server pinned to CPU 0, the load generator to CPU 1' : ''}` +
    `${pipeline > 1 ? `; ${pipeline} requests pipelined per write` : ''}` +
    (plain ? missing : []).map((name) => `; ${name} ${name === 'Bun' ? `not there (${why.Bun})` : 'not installed'}: skipped`).join(''))
  if (cases.some(isRevalidateCase)) {
    console.log('revalidate-4k: the 4 KiB file with If-None-Match set to the ETag each server gave it (If-Modified-Since with ' +
      'its Last-Modified where it gives no ETag, as a browser does), every answer a 304; a cell says when it is not')
  }
  // One column per case and connection count.
  const columns = cases.flatMap((name) => connections.map((count) => ({ name, connections: count, label: connections.length > 1 ? `${name} c${count}` : name })))
  const root = mkdtempSync(join(tmpdir(), 'zcopy-bench-http-'))
  const certificate = tls ? makeCertificate() : null
  try {
    const targets = Object.fromEntries(cases.map((name) => [name, prepareCase(root, name)]))
    // The servers of each column: the compressed case has its own.
    const kindsOf = (name) => targets[name].servers === undefined ? kinds : compressedKinds(targets[name])
    const compressed = cases.find(isCompressedCase)
    if (compressed !== undefined) {
      const missing = Object.keys(targets[compressed].servers).filter((kind) => !kindsOf(compressed).includes(kind))
      console.log(`compressed: a ${targets[compressed].size} B JavaScript bundle, Accept-Encoding: gzip, deflate, br; ` +
        'zcopy serve (defaults, compress on) on a folder without siblings, the others with .br/.gz built beforehand' +
        (missing.length ? `; not installed, skipped: ${missing.join(', ')}` : ''))
    }
    const runs = rounds * columns.reduce((sum, { name }) => sum + kindsOf(name).length, 0)
    const warmUps = columns.reduce((sum, { name }) => sum + kindsOf(name).length * warmUpOf(targets[name], warmUp), 0)
    console.log(`${runs} runs, about ${Math.ceil((runs * (seconds + 0.5) + rounds * warmUps) / 60)} min\n`)
    const results = Object.fromEntries(columns.map(({ name, label }) => [label, Object.fromEntries(kindsOf(name).map((kind) => [kind, []]))]))
    const labelWidth = Math.max(...columns.map(({ label }) => label.length))
    const kindWidth = Math.max(...columns.flatMap(({ name }) => kindsOf(name).map((kind) => kind.length)))
    for (let round = 1; round <= rounds; round++) {
      for (const { name, connections: count, label } of columns) {
        for (const kind of kindsOf(name)) {
          const result = await runOnce(kind, root, targets[name], { seconds, warmUp, workers: threads, connections: count, tls: certificate, unit, pinned, pipeline })
          results[label][kind].push(result)
          const { rate, cpu, clientCpu, errors, body } = result
          console.log(`round ${round}/${rounds}  ${label.padEnd(labelWidth)}  ${kind.padEnd(kindWidth)}  ` +
            `${formatNumber(rate).padStart(8)} ${unit.rate}${cpu ? `  ${formatCpu(cpu)} µs CPU/${unit.per}` : ''}` +
            `${clientCpu ? `, ${loadTool} ${formatNumber(clientCpu.user + clientCpu.system)}` : ''}${errors ? `  (${errors} errors)` : ''}` +
            `${result.note ? `  (${result.note})` : ''}` +
            `${body ? `  [${body.encoding} ${body.bytes} B${COMPRESSED_KINDS[targets[name].servers[kind]].variants ? `, variant after ${body.readyMs} ms` : ''}]` : ''}`)
        }
      }
    }
    const plain = columns.filter(({ name }) => !isCompressedCase(name))
    if (plain.length > 0) {
      const zcopys = servers ? kinds.filter((kind) => kind.startsWith('zcopy')) : [workers === null ? ZCOPY : ZCOPY_SERVE]
      printTables({ results, cases: plain.map(({ label }) => label), kinds, rounds }, zcopys, unit)
    }
    const squeezed = columns.filter(({ name }) => isCompressedCase(name))
    if (squeezed.length > 0) {
      console.log('\ncompressed text (zcopy serve compresses once, the others send siblings built beforehand):')
      printTables({ results, cases: squeezed.map(({ label }) => label), kinds: kindsOf(compressed), rounds }, [ZCOPY_SERVE, ZCOPY_NODE].filter((kind) => kindsOf(compressed).includes(kind)), unit)
    }
    if (memory && !servers) await measureMemory(root)
  } finally {
    rmSync(root, { recursive: true, force: true })
    certificate?.remove()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
