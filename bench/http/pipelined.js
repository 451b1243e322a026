'use strict'

// Memory held for HTTP/1.1 clients that pipeline requests for a file and never
// read a byte (issue 62, item 3):
//
//   node bench/http/pipelined.js [--connections 6] [--files big.bin,small.bin]
//                                [--servers 'zcopy serve,serveStatic,nginx']
//                                [--depth N] [--hold-ms 40000] [--warm-idle]
//                                [--distinct] [--rounds 1]
//                                [--cli PATH] [--lib PATH]
//
// Each server in its own process, plain HTTP on loopback: `zcopy serve`;
// zcopy's serveStatic in a node:http server (serveStatic) or as Express
// middleware (express), and either with zcopy.nativeLane in front
// (serveStatic+lane, express+lane: the lane listening, serveStatic's
// onReplayable lane.offer), the four by pipelined-server.js; nginx (tuned as
// in nginx.js). --servers picks among them (default: zcopy serve, serveStatic
// and nginx). Per server and file (big.bin: 8 MiB, small.bin: 100 bytes): the
// connections open, each writes `GET /FILE` requests (74 bytes each, Host and
// User-Agent) back to back for as long as its socket takes them (or --depth N
// of them in one write), and reads nothing; the server's RSS (with its
// children, from /proc) is read once they have stalled for --hold-ms (40 s:
// past V8's memory reducer, which gives back the heap that a closed
// connection's requests took) and it stopped moving, then the connections
// close. Behind node:http, zcopy closes a connection past 32 waiting requests
// (lib/http/delivery/one-at-a-time.js): --depth 33 is the most one connection
// holds there. The lane (and zcopy serve's) reads a connection's next request
// only once the answer to this one is written: one request, whatever the depth.
// The idle RSS is read some 3 s after the server started, before V8's memory
// reducer gives back its start's garbage (4-6 MiB of a Node server's, some
// 8 s in): a loaded reading that holds less than that comes out below idle.
// --warm-idle reads it as the loaded one instead: after one request for the
// file answered whole (its target `/FILE?warm`, not the one the lane is
// offered, so that the pipelined requests still reach the app) and
// --hold-ms, so that the growth is the connections' alone, not the server's
// first answer's nor its start's. Prints the bytes the clients got to send,
// the RSS idle and loaded, and the growth per connection beside nginx's.
// --distinct: each connection asks its own target (`/FILE?c=N`), so that no
// answer to one is replayed to another and every connection's first request
// reaches the app (what an attacker would send; otherwise, behind a lane that
// was offered the first answer, most connections get the lane's replay).
// --rounds N: the servers measured in turn N times (a fresh process each);
// the table gives each one's median and, with more than one round, the range.
// The RSS of a Node process moves by a few MiB between two readings (V8's
// heap), so per connection the spread falls as --connections grows: 3,000
// is about the most the bench's nginx (worker_connections 4096) takes.
// --cli: another checkout's bin/zcopy.js; --lib: another checkout's
// lib/index.js, for an A/B (the +lane servers need one with nativeLane).

const { fork } = require('node:child_process')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const { tmpdir } = require('node:os')
const { join, resolve: resolvePath } = require('node:path')
const { freePort } = require('./free-port')
const { machineLine } = require('./machine')
const { nginxInstalled, startNginx } = require('./nginx')
const { rssTree, settledRss, sleep } = require('./rss')
const { startZcopyServe } = require('./zcopy-serve')
const { parseOptions, usageError } = require('../lib/usage')

const FILES = { 'big.bin': 8 * 2 ** 20, 'small.bin': 100 }
const SERVERS = ['zcopy serve', 'serveStatic', 'serveStatic+lane', 'express', 'express+lane', 'nginx']
const DEFAULT_SERVERS = ['zcopy serve', 'serveStatic', 'nginx']
// pipelined-server.js's modes.
const IN_NODE = ['serveStatic', 'serveStatic+lane', 'express', 'express+lane']
const BATCH = 100 // requests per write

function options () {
  const { values } = parseOptions(__filename, {
    options: {
      connections: { type: 'string', default: '6' },
      files: { type: 'string', default: Object.keys(FILES).join(',') },
      servers: { type: 'string', default: DEFAULT_SERVERS.join(',') },
      depth: { type: 'string' },
      'hold-ms': { type: 'string', default: '40000' },
      'warm-idle': { type: 'boolean', default: false },
      distinct: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '1' },
      cli: { type: 'string' },
      lib: { type: 'string' }
    }
  })
  const connections = Number(values.connections)
  if (!Number.isInteger(connections) || connections < 1) usageError(__filename, `--connections must be a positive integer, got ${JSON.stringify(values.connections)}`)
  const depth = values.depth === undefined ? Infinity : Number(values.depth)
  if (!(Number.isInteger(depth) && depth > 0) && depth !== Infinity) usageError(__filename, `--depth must be a positive integer, got ${JSON.stringify(values.depth)}`)
  const rounds = Number(values.rounds)
  if (!Number.isInteger(rounds) || rounds < 1) usageError(__filename, `--rounds must be a positive integer, got ${JSON.stringify(values.rounds)}`)
  const holdMs = Number(values['hold-ms'])
  if (!Number.isInteger(holdMs) || holdMs < 0) usageError(__filename, `--hold-ms must be a whole number of milliseconds, got ${JSON.stringify(values['hold-ms'])}`)
  const files = values.files.split(',').map((name) => name.trim()).filter(Boolean)
  for (const name of files) if (FILES[name] === undefined) usageError(__filename, `unknown file ${JSON.stringify(name)} (one of ${Object.keys(FILES).join(', ')})`)
  const servers = values.servers.split(',').map((name) => name.trim()).filter(Boolean)
  for (const name of servers) if (!SERVERS.includes(name)) usageError(__filename, `unknown server ${JSON.stringify(name)} (one of ${SERVERS.join(', ')})`)
  const lib = values.lib === undefined ? undefined : resolvePath(values.lib)
  if (lib !== undefined && servers.some((name) => name.endsWith('+lane')) && typeof loadLib(lib, values.lib).nativeLane !== 'function') {
    usageError(__filename, `--lib ${values.lib} has no nativeLane (it came with commit a6d05ab): the +lane servers cannot run with it`)
  }
  return { connections, depth, holdMs, warmIdle: values['warm-idle'], distinct: values.distinct, rounds, files, servers: servers.filter((name) => name !== 'nginx' || nginxInstalled()), cli: values.cli, lib }
}

// The package at `lib` (its lib/index.js), or a usage error naming `given`.
function loadLib (lib, given) {
  try {
    return require(lib)
  } catch (err) {
    usageError(__filename, `--lib ${given} does not load: ${err.message}`)
  }
}

// serveStatic behind node:http or Express, with or without the lane: `mode`
// (pipelined-server.js). → { port, pid, stop() } once it listens.
async function startInNode (mode, root, lib) {
  const child = fork(join(__dirname, 'pipelined-server.js'), [mode, root, ...(lib ? [lib] : [])], { stdio: 'inherit' })
  const exited = new Promise((resolve) => child.once('exit', (...how) => resolve(how)))
  const port = await new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve(port))
    exited.then(([code, signal]) => reject(new Error(`pipelined-server.js ${mode} exited before listening (${signal ?? `exit code ${code}`})`)))
  })
  return {
    port,
    pid: child.pid,
    async stop () {
      child.kill()
      await exited
    }
  }
}

async function startServer (name, root, { cli, lib }) {
  if (IN_NODE.includes(name)) return startInNode(name, root, lib)
  if (name === 'nginx') {
    const port = await freePort()
    return { port, ...await startNginx(root, port, 1) }
  }
  return startZcopyServe(root, 1, cli ? { cli } : {})
}

// Opens `connections` that pipeline requests for `path` (with `distinct`, each
// `path?c=N`) for as long as their sockets take them (or `depth` of them in
// one write) and never read. → { sent(): bytes written, close() }
function pipeline (port, path, connections, depth, distinct) {
  let sent = 0
  const sockets = Array.from({ length: connections }, (_, n) => {
    const request = `GET ${distinct ? `${path}?c=${n}` : path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: zcopy-pipelined\r\n\r\n`
    const requests = Buffer.from(request.repeat(depth === Infinity ? BATCH : depth))
    const socket = net.connect(port, '127.0.0.1')
    socket.pause() // never read
    socket.on('error', () => {})
    const pump = () => {
      do sent += requests.length
      while (socket.write(requests) && depth === Infinity)
    }
    socket.once('connect', pump)
    if (depth === Infinity) socket.on('drain', pump)
    return socket
  })
  return {
    sent: () => sent,
    close () {
      for (const socket of sockets) socket.destroy()
    }
  }
}

// One GET of `path` on a connection of its own, its answer read whole.
function answered (port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume()
      res.on('end', resolve)
      res.on('error', reject)
    }).on('error', reject)
  })
}

async function measure (name, file, root, settings) {
  const server = await startServer(name, root, settings)
  try {
    await sleep(1000)
    if (settings.warmIdle) await answered(server.port, `/${file}?warm`)
    const { rss: idle } = await settledRss(server.pid, settings.warmIdle ? settings.holdMs : 0)
    const clients = pipeline(server.port, `/${file}`, settings.connections, settings.depth, settings.distinct)
    const { rss: loaded, highest } = await settledRss(server.pid, settings.holdMs)
    const sent = clients.sent()
    clients.close()
    return { name, file, idle, loaded, highest, sent, now: rssTree(server.pid) }
  } finally {
    await server.stop()
  }
}

const mib = (kib) => (kib / 1024).toFixed(1)

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

async function main () {
  const settings = options()
  const root = mkdtempSync(join(tmpdir(), 'zcopy-pipelined-'))
  try {
    for (const [file, size] of Object.entries(FILES)) writeFileSync(join(root, file), Buffer.alloc(size, 'z'))
    console.log(machineLine())
    const depth = settings.depth === Infinity ? 'as many as their sockets take' : `${settings.depth} in one write`
    const idle = settings.warmIdle ? `, idle after one answer and ${settings.holdMs} ms` : ''
    const targets = settings.distinct ? ', each its own target' : ''
    const rounds = settings.rounds > 1 ? `; ${settings.rounds} rounds, the servers in turn: medians (range)` : ''
    console.log(`${settings.connections} HTTP/1.1 connections that pipeline GET requests (${depth}${targets}) and never read, RSS after ${settings.holdMs} ms${idle}${rounds}; ${new Date().toISOString()}`)
    console.log('| file | server | clients sent MiB | idle MiB | loaded MiB (highest) | growth per connection KiB | ÷ nginx |')
    console.log('|---|---|---:|---:|---:|---:|---:|')
    const perConnection = (row) => (row.loaded - row.idle) / settings.connections
    for (const file of settings.files) {
      const runs = new Map(settings.servers.map((name) => [name, []]))
      for (let round = 0; round < settings.rounds; round++) {
        for (const name of settings.servers) runs.get(name).push(await measure(name, file, root, settings))
      }
      const nginx = runs.get('nginx')
      const nginxGrowth = nginx === undefined ? null : Math.max(1, median(nginx.map(perConnection)))
      for (const [name, rows] of runs) {
        const growths = rows.map(perConnection)
        const range = rows.length > 1 ? ` (${Math.min(...growths).toFixed(0)}–${Math.max(...growths).toFixed(0)})` : ''
        const ratio = nginxGrowth !== null && name !== 'nginx' ? `${(median(growths) / nginxGrowth).toFixed(1)}×` : ''
        const loaded = `${mib(median(rows.map((row) => row.loaded)))} (${mib(Math.max(...rows.map((row) => row.highest)))})`
        console.log(`| ${file} | ${name} | ${(median(rows.map((row) => row.sent)) / 2 ** 20).toFixed(1)} | ${mib(median(rows.map((row) => row.idle)))} | ${loaded} | ${median(growths).toFixed(0)}${range} | ${ratio} |`)
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
