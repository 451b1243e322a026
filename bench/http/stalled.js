'use strict'

// Memory held for clients that ask for a file and stop reading (issue 47):
//
//   node bench/http/stalled.js [--protocol tls|h2] [--clients 1000] [--streams 100]
//                              [--waves 3] [--servers 'zcopy serve,nginx'] [--cli PATH]
//                              [--baseline node-idle,node-write,node-stream] [--timeline]
//                              [--group X25519|default]
//
// Each server in its own process, over TLS 1.3 with one self-signed certificate
// (HTTP/1.1, or HTTP/2 with --protocol h2: --clients sessions of --streams
// requests each); the clients in another (stalled-client.js) ask for a 64 MiB
// and a 900 KiB file in turn and never read. Per wave: the clients connect, the
// server's memory is read once they have stalled for 5 s and it stopped moving
// (the RSS of the server and its children, from /proc; the highest reading on
// the way is printed beside it), the clients close, it is read again 5 s later,
// once it settled.
// --group: the one key exchange the clients offer, X25519 unless told. Every
// server compared can do it, so every one does the same handshake: a Node
// built on OpenSSL 3.5 (Node 24 and later) agrees on X25519MLKEM768 with a
// client that offers it, a handshake that costs the server more memory, which
// Debian's nginx (OpenSSL 3.0) cannot do. `--group default`: the clients'
// Node's own list. The key exchange each server chose is printed.
// Prints, per server, the idle RSS, each wave's loaded and after-close RSS, and
// the memory per stalled client (first wave's growth over the idle RSS, divided
// by the requests). --cli: another checkout's bin/zcopy.js, for an A/B.
//
// Servers besides `zcopy serve` and nginx (stalled-node-server.js, public API
// only): `node-idle`, a node:https (or node:http2) server whose handler never
// answers, `node-write`, one that writes the head and one 16 KiB piece and
// then nothing, and `node-stream`, one that writes the whole file from one
// shared 16 KiB piece, a write at a time: Node's own floor, under anything
// zcopy does (--baseline adds them after the others); `serveStatic`, zcopy's middleware in such a server,
// whose process.memoryUsage() is printed beside its RSS. --timeline: the RSS
// 1, 2, 5, 10, 30 and 60 s after each wave's clients closed (instead of once
// settled), with that breakdown for the Node servers.

const { fork } = require('node:child_process')
const { once } = require('node:events')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { freePort } = require('./free-port')
const { machineLine } = require('./machine')
const { nginxInstalled, startNginx } = require('./nginx')
const { rssTree, settledRss, sleep } = require('./rss')
const { makeCertificate } = require('./tls')
const NODE_SERVERS = ['node-idle', 'node-write', 'node-stream', 'serveStatic']
const SERVERS = ['zcopy serve', 'nginx', ...NODE_SERVERS]
const TIMELINE_S = [1, 2, 5, 10, 30, 60]
const { startZcopyServe } = require('./zcopy-serve')
const { parseOptions, usageError } = require('../lib/usage')

const FILES = { 'big.bin': 64 * 2 ** 20, 'medium.bin': 900 * 1024 }
// What a stalled client costs is read once the crowd has stalled this long:
// `zcopy serve` trims the C heap 2 s after the last connection came, and a
// reading made just before that trim would be a transient, not the cost.
const STALLED_MS = 5000
const AFTER_CLOSE_MS = 5000

function positive (name, text) {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) usageError(__filename, `--${name} must be a positive integer, got ${JSON.stringify(text)}`)
  return value
}

function options () {
  const { values } = parseOptions(__filename, {
    options: {
      protocol: { type: 'string', default: 'tls' },
      clients: { type: 'string' },
      streams: { type: 'string', default: '100' },
      waves: { type: 'string', default: '3' },
      servers: { type: 'string', default: 'zcopy serve,nginx' },
      cli: { type: 'string' },
      baseline: { type: 'string' },
      timeline: { type: 'boolean', default: false },
      group: { type: 'string', default: 'X25519' }
    }
  })
  if (!['tls', 'h2'].includes(values.protocol)) usageError(__filename, `--protocol is tls or h2, got ${JSON.stringify(values.protocol)}`)
  const h2 = values.protocol === 'h2'
  const servers = [values.servers, values.baseline ?? ''].join(',').split(',').map((name) => name.trim()).filter(Boolean)
  for (const name of servers) if (!SERVERS.includes(name)) usageError(__filename, `unknown server ${JSON.stringify(name)} (one of ${SERVERS.join(', ')})`)
  return {
    h2,
    clients: positive('clients', values.clients ?? (h2 ? '20' : '1000')),
    streams: h2 ? positive('streams', values.streams) : 1,
    waves: positive('waves', values.waves),
    servers: servers.filter((name) => name !== 'nginx' || nginxInstalled()),
    cli: values.cli,
    timeline: values.timeline,
    group: values.group === 'default' ? null : values.group
  }
}

function ask (client, message) {
  client.send(message)
  return once(client, 'message').then(([reply]) => reply)
}

// A Node server of stalled-node-server.js. → { port, pid, memory(), stop() }.
async function startNodeServer (mode, root, tls) {
  const child = fork(join(__dirname, 'stalled-node-server.js'), [mode, tls.http2 ? 'h2' : 'tls', tls.cert, tls.key, root], { stdio: 'inherit' })
  const [ready] = await once(child, 'message')
  return {
    port: ready.port,
    pid: child.pid,
    memory: () => ask(child, { memory: true }).then((reply) => reply.memory),
    async stop () {
      const exited = once(child, 'exit')
      child.kill()
      await exited
    }
  }
}

async function startServer (name, root, tls, cli) {
  if (NODE_SERVERS.includes(name)) return startNodeServer(name, root, tls)
  if (name === 'nginx') {
    const port = await freePort()
    const nginx = await startNginx(root, port, 1, tls)
    return { port, ...nginx }
  }
  return startZcopyServe(root, 1, { tls, ...(cli ? { cli } : {}) })
}

const mib = (kib) => (kib / 1024).toFixed(0)
const mibOf = (bytes) => (bytes / 2 ** 20).toFixed(0)

// One reading of the timeline: the RSS (KiB), and for a Node server its
// process.memoryUsage() in MiB.
async function reading (server) {
  const rss = rssTree(server.pid)
  if (!server.memory) return `${mib(rss)}`
  const { heapTotal, heapUsed, young, external, arrayBuffers } = await server.memory()
  return `${mib(rss)} (heap ${mibOf(heapUsed)}/${mibOf(heapTotal)}, young ${mibOf(young)}, external ${mibOf(external)}, arrayBuffers ${mibOf(arrayBuffers)})`
}

// The RSS at TIMELINE_S after `closed` (a Date.now()). → { after: the last
// RSS, timeline: text }.
async function timeline (server, closed) {
  const parts = []
  for (const seconds of TIMELINE_S) {
    await sleep(Math.max(0, closed + seconds * 1000 - Date.now()))
    parts.push(`${seconds} s ${await reading(server)}`)
  }
  return { after: rssTree(server.pid), timeline: parts.join('; ') }
}

async function measure (name, root, tls, { h2, clients, streams, waves, cli, timeline: withTimeline, group }) {
  const server = await startServer(name, root, tls, cli)
  const client = fork(join(__dirname, 'stalled-client.js'), { stdio: 'inherit' })
  try {
    await sleep(1000)
    const { rss: idle } = await settledRss(server.pid)
    if (withTimeline) console.log(`${name} idle: ${await reading(server)}`)
    const rows = []
    let chosen = null
    for (let wave = 1; wave <= waves; wave++) {
      const { opened, failed, keyExchange } = await ask(client, {
        open: { protocol: h2 ? 'h2' : 'tls', port: server.port, paths: Object.keys(FILES).map((file) => `/${file}`), connections: clients, streams, answered: name !== 'node-idle', group }
      })
      chosen ??= keyExchange
      const { rss: loaded, highest } = await settledRss(server.pid, STALLED_MS)
      const loadedText = withTimeline ? await reading(server) : null
      await ask(client, { close: true })
      if (withTimeline) {
        rows.push({ wave, opened, failed, loaded, highest, loadedText, ...await timeline(server, Date.now()) })
        continue
      }
      // zcopy's piece pool hands the C heap's free pages back after 2 s without
      // a response (4 s at most): the settling starts after that.
      await sleep(AFTER_CLOSE_MS)
      const { rss: after } = await settledRss(server.pid)
      rows.push({ wave, opened, failed, loaded, highest, after })
    }
    return { name, idle, rows, keyExchange: chosen }
  } finally {
    client.kill()
    await server.stop()
  }
}

function report ({ name, idle, rows, keyExchange }, requests) {
  const first = rows[0]
  const perClient = (first.loaded - idle) / requests
  console.log(`\n${name}: idle ${mib(idle)} MiB; per stalled request ${perClient.toFixed(0)} KiB (wave 1); key exchange ${keyExchange ?? 'unknown'}`)
  console.log('| wave | requests answered (failed) | loaded MiB (highest) | after close MiB |')
  console.log('|---:|---:|---:|---:|')
  for (const { wave, opened, failed, loaded, highest, after } of rows) {
    console.log(`| ${wave} | ${opened} (${failed}) | ${mib(loaded)} (${mib(highest)}) | ${mib(after)} |`)
  }
  for (const { wave, loadedText, timeline } of rows) {
    if (timeline) console.log(`wave ${wave}: loaded ${loadedText}; after close, MiB: ${timeline}`)
  }
  const last = rows[rows.length - 1]
  console.log(`last wave's peak ÷ first's: ${(last.highest / first.highest).toFixed(2)}×; after the last wave ÷ idle: ${(last.after / idle).toFixed(2)}×`)
  return perClient
}

async function main () {
  const settings = options()
  const root = mkdtempSync(join(tmpdir(), 'zcopy-stalled-'))
  const tls = { ...makeCertificate(), http2: settings.h2 }
  try {
    for (const [file, size] of Object.entries(FILES)) writeFileSync(join(root, file), Buffer.alloc(size, 'z'))
    const requests = settings.clients * settings.streams
    console.log(machineLine())
    console.log(`stalled clients: ${settings.h2 ? `${settings.clients} HTTP/2 sessions × ${settings.streams} streams` : `${settings.clients} HTTP/1.1 connections`} over TLS 1.3 (clients offer ${settings.group ?? "their Node's default groups"}), ` +
      `${Object.keys(FILES).join(' and ')} in turn, never read; ${settings.waves} waves; ${new Date().toISOString()}`)
    const perClient = {}
    for (const name of settings.servers) {
      perClient[name] = report(await measure(name, root, tls, settings), requests)
    }
    console.log('')
    if (perClient.nginx) {
      for (const name of settings.servers.filter((server) => server !== 'nginx')) {
        console.log(`per stalled request, ${name} ÷ nginx: ${(perClient[name] / perClient.nginx).toFixed(2)}×`)
      }
    }
    for (const floor of ['node-idle', 'node-write', 'node-stream']) {
      if (perClient[floor] === undefined) continue
      for (const name of ['zcopy serve', 'serveStatic'].filter((server) => perClient[server] !== undefined)) {
        console.log(`per stalled request, ${name} above ${floor}: ${(perClient[name] - perClient[floor]).toFixed(0)} KiB`)
      }
    }
  } finally {
    tls.remove()
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
