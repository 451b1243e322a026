'use strict'

// The load generator, always in its own process: wrk when installed (-t1 -c16,
// the design's setting; -tN against N server workers), autocannon otherwise;
// h2load for HTTP/2.
// → { tool, requests, requestsPerSecond, bytesRead, errors, cpu }, `bytesRead` what
// it received (heads and bodies, whole or not; wrk only, else null), `cpu` the generator's own
// { user, system } seconds (null without /proc): on a small machine it shares the
// cores with the server, and what each response costs it counts too.
// With `script` (wrk only), wrk runs that Lua file, which picks each request's
// path; `args` are passed to its init(). `pinned`: the generator runs on its own
// CPU (./pin.js). `pipeline`: that many requests in each write, as a
// pipelining client sends them, the next write once all are answered (wrk
// counts the responses); `script` may then set headers, not pick paths.

const { execFile, spawnSync } = require('node:child_process')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { promisify } = require('node:util')
const { endedChildrenCpuTime } = require('./cpu')
const { onLoadCpu } = require('./pin')

const run = promisify(execFile)

const wrkInstalled = spawnSync('wrk', ['--version']).error === undefined

// wrk's sizes: "612.77MB" (binary units).
const UNITS = { B: 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30, TB: 2 ** 40 }
const bytesOf = ([, number, unit]) => Math.round(Number(number) * UNITS[unit])

// → [command, args], on the generator's own CPU when `pinned`.
function placed (command, args, pinned) {
  return pinned ? onLoadCpu(command, args) : [command, args]
}

// A wrk script in `dir` that runs `script` (or none) and then sends `pipeline`
// requests per write → its path.
function pipelineScript (dir, script, pipeline) {
  const file = join(dir, 'pipeline.lua')
  writeFileSync(file, `${script ? `dofile([==[${script}]==])\n` : ''}local batch = nil
request = function()
  if batch == nil then batch = string.rep(wrk.format(), ${pipeline}) end
  return batch
end
`)
  return file
}

async function withWrk (url, { threads = 1, connections, seconds, script, args = [], pinned = false, pipeline = 1 }) {
  const dir = pipeline > 1 ? mkdtempSync(join(tmpdir(), 'zcopy-pipeline-')) : null
  try {
    const lua = dir === null ? script : pipelineScript(dir, script, pipeline)
    const options = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '60s', ...(lua ? ['-s', lua] : [])]
    const { stdout } = await run(...placed('wrk', [...options, url, ...(args.length ? ['--', ...args.map(String)] : [])], pinned), { maxBuffer: 1 << 20 })
    return wrkResult(stdout)
  } finally {
    if (dir !== null) rmSync(dir, { recursive: true, force: true })
  }
}

// wrk's report → the result; `requests` counts responses (each of a pipelined
// write's too).
function wrkResult (stdout) {
  const requests = Number(/(\d+) requests in/.exec(stdout)[1])
  const bytesRead = bytesOf(/requests in [\d.]+\w+, ([\d.]+)([KMGT]?B) read/.exec(stdout))
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1])
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout)
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0
  return { tool: 'wrk', requests, requestsPerSecond: rps, bytesRead, errors: (bad ? Number(bad[1]) : 0) + socketErrors }
}

async function withAutocannon (url, { threads = 1, connections, seconds, script, pinned = false, pipeline = 1 }) {
  if (script) throw new Error('a wrk Lua script needs wrk')
  const bin = require.resolve('autocannon/autocannon.js')
  const workers = threads > 1 ? ['-w', String(threads)] : []
  const pipelined = pipeline > 1 ? ['-p', String(pipeline)] : []
  const { stdout } = await run(...placed(process.execPath, [bin, '-j', ...workers, ...pipelined, '-c', String(connections), '-d', String(seconds), url], pinned), { maxBuffer: 16 << 20 })
  const result = JSON.parse(stdout)
  return { tool: 'autocannon', requests: result.requests.total, requestsPerSecond: result.requests.average, bytesRead: null, errors: result.errors + result.non2xx }
}

// HTTP/2 over TLS (h2load, nghttp2-client): `streams` requests in flight on
// each connection; `script` is not taken.
async function withH2load (url, { threads = 1, connections, seconds, streams = 1, script, pinned = false }) {
  if (script) throw new Error('a wrk Lua script needs wrk')
  const args = ['-t', String(threads), '-c', String(connections), '-m', String(streams), '-D', String(seconds), url]
  const { stdout } = await run(...placed('h2load', args, pinned), { maxBuffer: 1 << 20 })
  const [, succeeded, ...failures] = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(stdout)
  const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(stdout)[1])
  return { tool: 'h2load', requests: Number(succeeded), requestsPerSecond: rps, bytesRead: null, errors: failures.reduce((sum, n) => sum + Number(n), 0) }
}

// `protocol`: 'h2' loads with h2load (HTTP/2 over TLS), else wrk or autocannon.
async function measure (url, options) {
  const before = endedChildrenCpuTime()
  const tool = options.protocol === 'h2' ? withH2load : wrkInstalled ? withWrk : withAutocannon
  const result = await tool(url, options)
  const after = endedChildrenCpuTime()
  const cpu = before === null || after === null ? null : { user: after.user - before.user, system: after.system - before.system }
  return { ...result, cpu }
}

// Asked only by a run that loads over HTTP/2.
function h2loadInstalled () {
  return spawnSync('h2load', ['--version']).error === undefined
}

module.exports = { measure, loadTool: wrkInstalled ? 'wrk' : 'autocannon', wrkInstalled, h2loadInstalled }
