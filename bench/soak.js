#!/usr/bin/env node
'use strict'

// Soak: zcopy.serveStatic under hostile keep-alive clients, every body byte checked.
//
//   node bench/soak.js [--seconds 60] [--connections 100] [--json] [--fallback] [--tls]
//                      [--http2] [--raw-node] [--lib path/to/lib/index.js] [--seed N]
//
// A server (node:http, or https with --tls, + serveStatic over a temporary tree of
// random files) runs in a child process; this process opens --connections
// keep-alive connections to it on 127.0.0.1, each sending pipelined batches of 1-4
// requests (plain GETs, HEADs, valid, open-ended, suffix, unsatisfiable and
// multiple ranges, conditional GETs, missing files), cutting connections at random
// points (destroy or RST, mid-body, with pipelined responses still queued) and
// stopping reading for a while (slow readers). Every response is parsed and checked
// (status, Content-Length, Content-Range) and every body byte that arrives is
// compared with the file's bytes.
//
// Afterwards: the client connections are closed (what a client still has open
// when the load ends, a pending connect too, is cut, and waited for), the server
// settles (no connection left), the middleware's close() is called, and the
// server's descriptors and memory are compared with a baseline taken after a
// warm-up (see below).
//
// Exit code 0 only when: no wrong byte and no wrong response, the server stayed up,
// no response stalled and the server dropped no connection by itself, every client
// connection closed once cut, no server connection is left after settling, close()
// resolved (within 5 s), the server has exactly the descriptors of the baseline
// (allowance 0: every client connection is closed and the open-file cache is empty
// after close(); anything more is a leak), and the files on disk are unchanged.
// 1 otherwise; 2 for bad arguments.
//
// The baseline: a warm-up (plain requests on one connection, no cut, through a
// first middleware that is then closed) runs before it, so process-wide things
// created once on first use (the addon's, Node's) are in it, not counted as leaks.
// The count at start (before any request) is printed too.
//
// --lib runs the soak against another copy of zcopy (e.g. a worktree of an older
// commit), SOAK_LIB too. --fallback sets ZCOPY_NATIVE=0 in the server (streams).
// --tls: the body goes through the response object (TLS socket).
// --http2: HTTP/2 over TLS (node:http2's secure server, serveStatic through its
// compatibility API); each connection is a session sending batches of 1-4
// concurrent streams, cut by RST_STREAM mid-body, by GOAWAY, or by a TCP RST;
// the server's sessions must be back to none as its connections.
// The server is protected with zcopy.protectServer (timeout 6 s) as zcopy serve
// is; --raw-node leaves Node's server as it is, to show what it does alone: over
// TLS it cuts responses mid-body, answers 400 to valid pipelined requests
// (HPE_PAUSED) and keeps sockets whose clients reset them (judged the same).
// Only 127.0.0.1 is used. Bounded in time: the load for --seconds, then at most
// ~15 s to drain, 4 s for the client connections cut to close, ~15 s to settle,
// 5 s for close(); a watchdog ends everything (exit 1) at --seconds + 90 s. The
// server process is killed on every exit path.

const { fork } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Connection, random, newStats } = require('./soak/client')
const { H2Connection } = require('./soak/h2-client')
const { makeTree, changedFiles } = require('./soak/tree')
const { parseOptions, usageError } = require('./lib/usage')

const STALL_MS = 10_000
const DRAIN_MS = 15_000
// The server is protected with this idle timeout (longer than a slow reader's
// longest pause, 2 s). Node gives a socket whose last write it believes still in
// progress one more period before its 'timeout' (net's _onTimeout): a TLS socket
// whose client reset it while Node held a write for it is closed after up to two
// periods, and Node's keep-alive timer adds a second. Settling waits that long.
const PROTECT_TIMEOUT_MS = 6_000
const SETTLE_MS = 2 * PROTECT_TIMEOUT_MS + 3_000
const CLOSE_TIMEOUT_MS = 5_000
// A client transport cut at the load's end closes within this (its sockets are
// destroyed if it has not, then it gets as long again).
const CUT_MS = 2_000
const WARMUP_MS = 1_500
const DESCRIPTOR_ALLOWANCE = 0

function options () {
  const { values } = parseOptions(__filename, {
    options: {
      seconds: { type: 'string', default: '60' },
      connections: { type: 'string', default: '100' },
      json: { type: 'boolean', default: false },
      fallback: { type: 'boolean', default: false },
      tls: { type: 'boolean', default: false },
      http2: { type: 'boolean', default: false },
      'raw-node': { type: 'boolean', default: false },
      lib: { type: 'string', default: process.env.SOAK_LIB || path.join(__dirname, '..', 'lib', 'index.js') },
      seed: { type: 'string' }
    }
  })
  const seconds = Number(values.seconds)
  const connections = Number(values.connections)
  if (!(seconds > 0 && seconds <= 3600)) usageError(__filename, `--seconds must be a number of seconds in (0, 3600], not ${values.seconds}`)
  if (!(Number.isInteger(connections) && connections >= 1 && connections <= 1000)) usageError(__filename, `--connections must be an integer in [1, 1000], not ${values.connections}`)
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(values.seed)
  if (!Number.isInteger(seed) || seed < 0) usageError(__filename, `--seed must be a non-negative integer, not ${values.seed}`)
  const lib = path.resolve(values.lib)
  if (!fs.existsSync(lib)) usageError(__filename, `--lib: no such file ${lib}`)
  return { ...values, tls: values.tls || values.http2, rawNode: values['raw-node'], seconds, connections, seed, lib }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Waits for `promise`, at most `ms` (the timer does not outlive the wait).
function within (promise, ms) {
  let timer
  return Promise.race([promise, new Promise((resolve) => { timer = setTimeout(resolve, ms) })])
    .finally(() => clearTimeout(timer))
}

// The server child and a request/reply channel to it.
function startServer ({ root, lib, tls, http2, fallback, rawNode }) {
  const env = { ...process.env }
  if (fallback) env.ZCOPY_NATIVE = '0'
  env.SOAK_SERVER = JSON.stringify({ root, lib, tls, http2, rawNode, timeoutMs: PROTECT_TIMEOUT_MS, fixtures: path.join(__dirname, '..', 'test', 'fixtures', 'http') })
  const child = fork(path.join(__dirname, 'soak', 'server.js'), [], {
    env,
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc']
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr = (stderr + chunk).slice(-8192) })
  const waiting = new Map()
  let nextId = 1
  const server = {
    child,
    exit: null, // { code, signal } once it exited
    expectedExit: false,
    stderr: () => stderr,
    ready: new Promise((resolve, reject) => {
      child.on('message', (message) => {
        if (message.ready) return resolve(message)
        const pending = waiting.get(message.id)
        if (pending) {
          waiting.delete(message.id)
          pending(message)
        }
      })
      child.once('exit', (code, signal) => {
        server.exit = { code, signal }
        reject(new Error(`the server exited (${signal || code}) before it listened: ${stderr}`))
        for (const pending of waiting.values()) pending(null)
        waiting.clear()
      })
    }),
    // → the reply, or null when the server is gone or does not answer in time.
    ask (op, args = {}, timeoutMs = 15_000) {
      if (server.exit !== null || !child.connected) return Promise.resolve(null)
      const id = nextId++
      return new Promise((resolve) => {
        const timer = setTimeout(() => { waiting.delete(id); resolve(null) }, timeoutMs)
        waiting.set(id, (reply) => { clearTimeout(timer); resolve(reply) })
        child.send({ id, op, ...args })
      })
    },
    async stop () {
      if (server.exit !== null) return
      server.expectedExit = true
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.disconnect() // it exits when its parent goes away
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
      await exited
      clearTimeout(timer)
    }
  }
  server.ready.catch(() => {})
  return server
}

// Runs `count` connections until `stopAt` (or the server is gone), then waits for
// them to finish their batch and hang up, at most DRAIN_MS; stragglers are cut and
// counted as stalls. Then every client transport still open is cut and waited for
// (see cutTransports). → the number of client transports that did not close.
async function load (ctx, count, stopAt) {
  let stop = false
  ctx.stopping = () => stop || Date.now() >= stopAt || ctx.serverGone()
  ctx.transports = new Set()
  const connections = Array.from({ length: count }, (_, i) => ctx.http2 ? new H2Connection(ctx, i) : new Connection(ctx, i))
  const watch = setInterval(() => {
    const now = Date.now()
    for (const c of connections) {
      if (c.batch !== null && !c.paused && now - c.lastProgress > STALL_MS) c.stalled()
    }
  }, 500)
  const runs = Promise.all(connections.map((c) => c.run()))
  const progress = ctx.onProgress ? setInterval(ctx.onProgress, 5000) : null
  await within(runs, Math.max(0, stopAt - Date.now()) + DRAIN_MS)
  stop = true
  for (const c of connections) if (c.batch !== null) c.stalled()
  clearInterval(watch)
  if (progress) clearInterval(progress)
  const left = await cutTransports(ctx.transports)
  await within(runs, 3000)
  return left
}

// Cuts every client transport still open when the load ends and waits until
// their TCP sockets closed. Runs that hung up are done, but what they opened may
// not be gone: a connect still pending (it would connect during the settling), an
// HTTP/2 session the client destroyed whose socket is still flushing, a
// straggler's connection. A client still holding a connection keeps the server's
// side of it busy: the server must be judged on what it keeps once its clients
// are gone, not on what a client still uses. Each is cut its own way first (an
// HTTP/2 session is destroyed, not the socket beneath it), its sockets destroyed
// if still open CUT_MS later. → how many are still open after that (0 unless the
// client itself is broken).
async function cutTransports (transports) {
  const open = [...transports]
  const closed = Promise.all(open.map((t) => t.closed))
  for (const t of open) t.cut()
  await within(closed, CUT_MS)
  for (const t of open) if (t.open) t.destroy()
  await within(closed, CUT_MS)
  return open.filter((t) => t.open).length
}

// Polls the server until it has no connection nor session left (at most SETTLE_MS).
async function settle (server) {
  const deadline = Date.now() + SETTLE_MS
  let stats = await server.ask('stats')
  while (stats !== null && (stats.connections > 0 || stats.sessions > 0) && Date.now() < deadline) {
    await sleep(100)
    stats = await server.ask('stats')
  }
  return stats
}

function descriptorDiff (before, after) {
  const diff = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] || 0) - (before[key] || 0)
    if (d !== 0) diff[key] = d
  }
  return diff
}

// The difference by kind: files of the tree (deleted or not), sockets, pipes, other.
function summarize (diff, root) {
  const kinds = {}
  for (const [target, n] of Object.entries(diff)) {
    const kind = target.startsWith(root + path.sep)
      ? (target.endsWith(' (deleted)') ? 'deleted files of the tree' : 'files of the tree')
      : target
    kinds[kind] = (kinds[kind] || 0) + n
  }
  return kinds
}

const MiB = 1024 * 1024
const mib = (bytes) => bytes === undefined || bytes === null ? 'n/a' : `${(bytes / MiB).toFixed(1)} MiB`

async function main () {
  const opts = options()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-soak-'))
  let server = null
  const cleanup = () => {
    if (server !== null && server.exit === null) {
      try { server.child.kill('SIGKILL') } catch {}
    }
    try { fs.rmSync(root, { recursive: true, force: true }) } catch {}
  }
  process.on('exit', cleanup)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => { cleanup(); process.exit(130) })
  }
  const watchdog = setTimeout(() => {
    process.stderr.write(`soak: watchdog: still running after ${opts.seconds + 90} s, giving up\n`)
    cleanup()
    process.exit(1)
  }, (opts.seconds + 90) * 1000)

  const files = makeTree(root)
  server = startServer({ root, lib: opts.lib, tls: opts.tls, http2: opts.http2, fallback: opts.fallback, rawNode: opts.rawNode })
  const ready = await server.ready
  const say = opts.json ? () => {} : (line) => process.stderr.write(line + '\n')
  say(`soak: server pid ${ready.pid} on 127.0.0.1:${ready.port}${opts.http2 ? ' (HTTP/2, TLS)' : opts.tls ? ' (TLS)' : ''}, zeroCopy ${ready.zeroCopy}, ${files.length} files (1 B to ${mib(Math.max(...files.map((f) => f.size)))}), seed ${opts.seed}`)

  const serverGone = () => server.exit !== null
  const etags = new Map()
  const rng = random(opts.seed)

  // Warm-up: one connection, no cuts, no pauses, through a middleware closed after.
  const warmStats = newStats()
  await load({ port: ready.port, tls: opts.tls, http2: opts.http2, files, etags, stats: warmStats, rng, serverGone, resetRate: 0, slowRate: 0 }, 1, Date.now() + WARMUP_MS)
  await settle(server)
  const warmClose = await server.ask('close', { timeoutMs: CLOSE_TIMEOUT_MS })
  await server.ask('middleware')
  etags.clear()
  const baseline = await server.ask('stats')
  if (baseline === null) throw new Error(`the server is gone after the warm-up: ${server.stderr()}`)
  say(`soak: warm-up ${warmStats.responses} responses; baseline ${baseline.descriptors.count} descriptors, RSS ${mib(baseline.memory.rss)}; ${opts.connections} connections for ${opts.seconds} s`)

  // The soak.
  const stats = newStats()
  const started = Date.now()
  const ctx = {
    port: ready.port,
    tls: opts.tls,
    http2: opts.http2,
    files,
    etags,
    stats,
    rng,
    serverGone,
    onProgress: () => say(`  ${Math.round((Date.now() - started) / 1000)} s: ${stats.responses} responses, ${stats.wrongBytes} wrong bytes, ${stats.resets} resets, ${stats.unexpectedCloses} dropped, ${stats.stalls} stalls${serverGone() ? ', SERVER GONE' : ''}`)
  }
  const clientLeft = await load(ctx, opts.connections, started + opts.seconds * 1000)
  const loadSeconds = Math.min(Date.now() - started, opts.seconds * 1000) / 1000

  // Settle, then close().
  const settled = await settle(server)
  // Connections left (Node's https server alone keeps some whose clients reset
  // them) are reported, then closed by the server, so that the descriptors can
  // be judged too.
  let leftDetail = null
  if (settled !== null && (settled.connections > 0 || settled.sessions > 0)) {
    const reply = await server.ask('connectionsLeft')
    leftDetail = reply && reply.left
    await server.ask('closeConnections')
    await settle(server)
  }
  const close = settled === null ? null : await server.ask('close', { timeoutMs: CLOSE_TIMEOUT_MS })
  const after = await server.ask('stats')
  const serverUp = server.exit === null && after !== null
  const exit = server.exit
  const stderr = server.stderr()
  await server.stop()
  const changed = changedFiles(files)
  clearTimeout(watchdog)

  const result = {
    config: {
      seconds: opts.seconds,
      connections: opts.connections,
      tls: opts.tls,
      http2: opts.http2,
      rawNode: opts.rawNode,
      fallback: opts.fallback,
      zeroCopy: ready.zeroCopy,
      lib: opts.lib,
      seed: opts.seed,
      node: process.version,
      files: files.length
    },
    loadSeconds,
    requests: stats.requests,
    responses: stats.responses,
    bodiesVerified: stats.bodies,
    requestsPerSecond: Math.round(stats.responses / loadSeconds),
    bytesVerified: stats.bytesVerified + warmStats.bytesVerified,
    wrongBytes: stats.wrongBytes + warmStats.wrongBytes,
    wrongResponses: stats.wrongResponses + warmStats.wrongResponses,
    samples: [...warmStats.samples, ...stats.samples],
    byStatus: stats.byStatus,
    byKind: stats.byKind,
    resets: stats.resets,
    resetsByMethod: stats.resetsByMethod,
    resetsIdle: stats.resetsIdle,
    cutResponses: stats.cutResponses,
    abandonedResponses: stats.abandonedResponses,
    slowPauses: stats.slowPauses,
    slowSeconds: Math.round(stats.slowMs / 100) / 10,
    unexpectedCloses: stats.unexpectedCloses + warmStats.unexpectedCloses,
    unexpectedCloseCodes: stats.unexpectedCloseCodes,
    stalls: stats.stalls + warmStats.stalls,
    connectErrors: stats.connectErrors,
    connectionsOpened: stats.connections,
    clientConnectionsLeft: clientLeft,
    warmup: { responses: warmStats.responses, close: warmClose },
    server: {
      pid: ready.pid,
      up: serverUp,
      exit,
      stderr: serverUp ? undefined : stderr,
      connectionsLeft: settled === null ? null : settled.connections,
      connectionsLeftDetail: leftDetail,
      sessionsLeft: settled === null ? null : settled.sessions,
      errors: after === null ? null : after.errors
    },
    descriptors: {
      atStart: ready.fdsAtStart.count,
      baseline: baseline.descriptors.count,
      beforeClose: settled === null ? null : settled.descriptors.count,
      after: after === null ? null : after.descriptors.count,
      allowance: DESCRIPTOR_ALLOWANCE,
      leaked: after === null ? null : descriptorDiff(baseline.descriptors.byTarget, after.descriptors.byTarget)
    },
    memory: {
      baseline: baseline.memory,
      after: after === null ? null : after.memory
    },
    close: close === null ? { resolved: false, error: 'server gone' } : close,
    filesIntact: changed.length === 0,
    filesChanged: changed
  }

  const failures = []
  if (result.wrongBytes !== 0) failures.push(`${result.wrongBytes} wrong bytes`)
  if (result.wrongResponses !== 0) failures.push(`${result.wrongResponses} wrong responses`)
  if (!serverUp) failures.push(`the server did not stay up (${exit ? exit.signal || `exit code ${exit.code}` : 'no answer'})`)
  if (result.stalls !== 0) failures.push(`${result.stalls} stalled responses`)
  if (result.unexpectedCloses !== 0) failures.push(`${result.unexpectedCloses} connections dropped by the server`)
  if (clientLeft !== 0) failures.push(`${clientLeft} client connections still open ${2 * CUT_MS / 1000} s after they were cut at the load's end`)
  if (settled !== null && settled.sessions !== 0) failures.push(`${settled.sessions} HTTP/2 sessions left after ${SETTLE_MS / 1000} s`)
  if (settled !== null && settled.connections !== 0) failures.push(`${settled.connections} server connections left after ${SETTLE_MS / 1000} s: ${JSON.stringify(leftDetail)}`)
  if (!result.close.resolved) failures.push(`close() ${result.close.timedOut ? `did not resolve within ${CLOSE_TIMEOUT_MS / 1000} s` : `failed: ${result.close.rejected || result.close.error}`}`)
  if (result.descriptors.after === null) {
    failures.push('descriptors not measured (no server)')
  } else if (result.descriptors.after > result.descriptors.baseline + DESCRIPTOR_ALLOWANCE) {
    failures.push(`descriptors ${result.descriptors.baseline} → ${result.descriptors.after} (${JSON.stringify(summarize(result.descriptors.leaked, root))})`)
  }
  if (!result.filesIntact) failures.push(`files changed on disk: ${changed.join(', ')}`)
  result.ok = failures.length === 0
  result.failures = failures

  if (opts.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } else {
    const d = result.descriptors
    const m = result.memory
    const lines = [
      `zcopy soak: ${opts.connections} connections, ${loadSeconds} s, ${opts.http2 ? 'h2 (TLS)' : opts.tls ? 'https' : 'http'}${opts.rawNode ? ' (raw Node server)' : ''}, ${ready.zeroCopy ? 'native (sendfile)' : 'fallback (streams)'}, seed ${opts.seed}`,
      `  responses (complete, verified)  ${result.responses} of ${result.requests} requests (${result.bodiesVerified} bodies); ${JSON.stringify(result.byStatus)}`,
      `  bytes verified                  ${result.bytesVerified} (${mib(result.bytesVerified)})`,
      `  wrong bytes                     ${result.wrongBytes}`,
      `  wrong responses                 ${result.wrongResponses}`,
      `  resets                          ${result.resets} (${Object.entries(result.resetsByMethod).map(([how, n]) => `${how} ${n}`).join(', ')}; ${result.cutResponses} responses cut, ${result.abandonedResponses} queued behind them, ${result.resetsIdle} idle)`,
      `  slow readers                    ${result.slowPauses} pauses, ${result.slowSeconds} s in all`,
      `  requests per second             ${result.requestsPerSecond}`,
      `  dropped by server / stalls      ${result.unexpectedCloses} ${JSON.stringify(result.unexpectedCloseCodes)} / ${result.stalls}`,
      `  descriptors                     at start ${d.atStart}, baseline ${d.baseline}, settled ${d.beforeClose ?? 'n/a'} (open-file cache), after close() ${d.after ?? 'n/a'} (allowance ${d.allowance})${d.leaked && Object.keys(d.leaked).length ? ' ' + JSON.stringify(summarize(d.leaked, root)) : ''}`,
      `  RSS                             baseline ${mib(m.baseline.rss)}, after ${mib(m.after && m.after.rss)} (heap ${mib(m.baseline.heapUsed)} → ${mib(m.after && m.after.heapUsed)}, after gc)`,
      `  close()                         ${result.close.resolved ? `resolved in ${result.close.ms} ms` : result.close.timedOut ? `did NOT resolve within ${CLOSE_TIMEOUT_MS} ms` : `failed: ${result.close.rejected || result.close.error}`}`,
      `  server                          ${serverUp ? 'stayed up' : `GONE (${exit ? exit.signal || `exit code ${exit.code}` : 'no answer'})`}${settled && settled.connections ? `, ${settled.connections} connections left` : ''}`,
      `  files on disk                   ${result.filesIntact ? 'unchanged' : 'CHANGED: ' + changed.join(', ')}`
    ]
    const errs = result.server.errors
    if (errs && Object.keys(errs.beforeHeaders).length) lines.push(`  server errors before headers    ${JSON.stringify(errs.beforeHeaders)}`)
    if (errs && Object.keys(errs.afterHeaders).length) lines.push(`  server errors after headers     ${JSON.stringify(errs.afterHeaders)}`)
    for (const s of result.samples) lines.push(`  sample: ${JSON.stringify(s)}`)
    if (!serverUp && stderr) lines.push('  server stderr:', ...stderr.trimEnd().split('\n').slice(-20).map((l) => '    ' + l))
    lines.push(result.ok ? 'PASS' : `FAIL: ${failures.join('; ')}`)
    process.stdout.write(lines.join('\n') + '\n')
  }
  process.exitCode = result.ok ? 0 : 1
}

main().catch((err) => {
  process.stderr.write(`soak: ${err && err.stack ? err.stack : err}\n`)
  process.exitCode = 1
})
