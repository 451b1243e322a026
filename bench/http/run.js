'use strict'

// HTTP benchmark: the same files from zcopy and its peers, side by side in one run
// (this machine is noisy: compare ratios, not absolute figures).
//
//   node bench/http/run.js [--seconds 5] [--sizes 4k,64k,1m,100m] [--no-memory]
//
// Each server runs in its own child process; the load comes from another (wrk
// -t1 -c16 when installed, else autocannon). nginx (sendfile on) joins when it is
// installed. Prints a markdown table of req/s with ratios, one of the server's CPU
// time per request (Linux), then the memory check.

const { fork } = require('node:child_process')
const { once } = require('node:events')
const { randomBytes } = require('node:crypto')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const net = require('node:net')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { cpuTime, perRequest } = require('./cpu')
const { measure, loadTool } = require('./load')
const { measureMemory } = require('./memory')
const { nginxInstalled, startNginx } = require('./nginx')
const { KINDS } = require('./server')

const SIZES = { '4k': 4 * 1024, '64k': 64 * 1024, '1m': 1024 * 1024, '100m': 100 * 1024 * 1024 }

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    sizes: { type: 'string', default: Object.keys(SIZES).join(',') },
    'no-memory': { type: 'boolean', default: false }
  }
})

function makeFiles (root, sizes) {
  for (const size of sizes) writeFileSync(join(root, `${size}.bin`), randomBytes(SIZES[size]))
}

async function freePort () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// → { port, pid, stop() } for a Node server kind or nginx.
async function start (kind, root) {
  if (kind === 'nginx') {
    const port = await freePort()
    const nginx = await startNginx(root, port)
    return { port, pid: nginx.pid, stop: () => nginx.stop() }
  }
  const child = fork(join(__dirname, 'server.js'), [kind, root], { stdio: 'inherit' })
  const [{ port }] = await once(child, 'message')
  return {
    port,
    pid: child.pid,
    async stop () {
      child.kill()
      await once(child, 'exit')
    }
  }
}

function ratio (value, base) {
  return base ? `${(value / base).toFixed(2)}×` : 'n/a'
}

async function main () {
  const sizes = args.sizes.split(',')
  const seconds = Number(args.seconds)
  const root = mkdtempSync(join(tmpdir(), 'zcopy-bench-http-'))
  const kinds = nginxInstalled() ? [...KINDS, 'nginx'] : KINDS
  if (!nginxInstalled()) console.log('nginx not installed: skipped')
  console.log(`load: ${loadTool}, 16 connections, ${seconds}s per run, Node ${process.version}\n`)
  try {
    makeFiles(root, sizes)
    const results = {} // size → kind → { requestsPerSecond, cpu: { user, system } µs per request | null }
    for (const size of sizes) {
      results[size] = {}
      for (const kind of kinds) {
        const server = await start(kind, root)
        try {
          const url = `http://127.0.0.1:${server.port}/${size}.bin`
          await measure(url, { connections: 16, seconds: 1 }) // warm-up: caches, JIT
          const before = cpuTime(server.pid)
          const { requests, requestsPerSecond, errors } = await measure(url, { connections: 16, seconds })
          const cpu = perRequest(before, cpuTime(server.pid), requests)
          results[size][kind] = { requestsPerSecond, cpu }
          console.log(`${size.padEnd(5)} ${kind.padEnd(20)} ${requestsPerSecond.toFixed(0).padStart(8)} req/s${cpu ? `  ${formatCpu(cpu)} µs CPU/request` : ''}${errors ? `  (${errors} errors)` : ''}`)
        } finally {
          await server.stop()
        }
      }
    }
    printTable(results, sizes, kinds)
    if (!args['no-memory']) await measureMemory(root)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

function microseconds (value) {
  return value < 100 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US')
}

function formatCpu ({ user, system }) {
  return `${microseconds(user + system)} (${microseconds(user)} + ${microseconds(system)})`
}

function printTable (results, sizes, kinds) {
  const zcopy = 'zcopy (node:http)'
  const rps = (size, kind) => results[size][kind].requestsPerSecond
  console.log(`\n| server | ${sizes.join(' | ')} |`)
  console.log(`|---|${sizes.map(() => '---').join('|')}|`)
  for (const kind of kinds) {
    console.log(`| ${kind} | ${sizes.map((size) => rps(size, kind).toFixed(0)).join(' | ')} |`)
  }
  for (const base of kinds.filter((kind) => !kind.startsWith('zcopy'))) {
    console.log(`| zcopy ÷ ${base} | ${sizes.map((size) => ratio(rps(size, zcopy), rps(size, base))).join(' | ')} |`)
  }
  // The same Express app both ways: Express's own per-request work is in both.
  const inExpress = 'zcopy (Express)'
  console.log(`| ${inExpress} ÷ express.static | ${sizes.map((size) => ratio(rps(size, inExpress), rps(size, 'express.static'))).join(' | ')} |`)
  printCpuTable(results, sizes, kinds)
}

// Server CPU per request, µs: total (user + system).
function printCpuTable (results, sizes, kinds) {
  if (!sizes.every((size) => kinds.every((kind) => results[size][kind].cpu !== null))) return
  console.log(`\n| server CPU µs/request (user + system) | ${sizes.join(' | ')} |`)
  console.log(`|---|${sizes.map(() => '---').join('|')}|`)
  for (const kind of kinds) {
    console.log(`| ${kind} | ${sizes.map((size) => formatCpu(results[size][kind].cpu)).join(' | ')} |`)
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
