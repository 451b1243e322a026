'use strict'

// Issue 48's third goal: while 1,000 new compressible files are first
// requested, no request waits for a compression. `zcopy serve` (defaults:
// compress on) serves the 212 KiB bundle, already compressed, to wrk -t1 -c16
// --latency for S s; in the second run a client (4 at a time) asks for 1,000
// new 64 KiB JavaScript files meanwhile, each queueing its brotli 11 variant.
// Reports the bundle's req/s and p50/p99 latency in both runs, and the
// server's RSS and cache folder size at the end.
//
//   node bench/http/compress-burst.js [--seconds 10]

const { spawn, execFile } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')
const { makeBundle } = require('./bundle')
const { freePort } = require('./free-port')

const run = promisify(execFile)
const ACCEPT = 'gzip, deflate, br'
const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 10

function get (port, file) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: file, headers: { 'accept-encoding': ACCEPT } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.headers))
    }).on('error', reject)
  })
}

function rssMiB (pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024
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

async function main () {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-burst-'))
  const big = makeBundle(2 * 1024 * 1024)
  fs.writeFileSync(path.join(root, 'hot.js'), makeBundle())
  fs.mkdirSync(path.join(root, 'new'))
  for (let i = 0; i < 1000; i++) {
    const at = (i * 7919) % (big.length - 65536)
    fs.writeFileSync(path.join(root, 'new', `f${i}.js`), Buffer.concat([Buffer.from(`/* file ${i} */\n`), big.subarray(at, at + 65536 - 20)]))
  }
  try {
    const rows = []
    for (const compress of [true, false]) rows.push(await session(root, compress))
    console.log(`# ${new Date().toISOString()} load ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}; zcopy serve; wrk -t1 -c16 -d${seconds}s --latency on the 212 KiB bundle`)
    console.log('| zcopy serve | run | req/s | p50 ms | p99 ms | p99 × alone | RSS at end | cache folder |')
    console.log('|---|---|---:|---:|---:|---:|---:|---:|')
    for (const { compress, quiet, busy, asked, rss, cache } of rows) {
      const name = compress ? 'defaults (compress)' : '--no-compress'
      console.log(`| ${name} | bundle alone | ${quiet.rps.toFixed(0)} | ${quiet.p50.toFixed(2)} | ${quiet.p99.toFixed(2)} | | | |`)
      console.log(`| ${name} | while ${asked} new 64 KiB files are first asked for | ${busy.rps.toFixed(0)} | ${busy.p50.toFixed(2)} | ${busy.p99.toFixed(2)} | ${(busy.p99 / quiet.p99).toFixed(2)}× | ${rss.toFixed(0)} MiB | ${(cache / 1048576).toFixed(1)} MiB |`)
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

async function session (root, compress) {
  const port = await freePort()
  const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'bin', 'zcopy.js'), 'serve', root, '--port', String(port), '--quiet', ...(compress ? [] : ['--no-compress'])], { stdio: 'ignore' })
  try {
    for (let i = 0; i < 200; i++) {
      try { await get(port, '/hot.js'); break } catch { await new Promise((resolve) => setTimeout(resolve, 50)) }
    }
    for (let i = 0; compress && i < 400; i++) { // the bundle's variant made
      const headers = await get(port, '/hot.js')
      if (headers['content-encoding']) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await wrk(port) // warm-up
    const quiet = await wrk(port)
    let asked = 0
    let stop = false
    const burst = Promise.all(Array.from({ length: 4 }, async () => {
      while (!stop && asked < 1000) await get(port, `/new/f${asked++}.js`)
    }))
    const busy = await wrk(port)
    stop = true
    await burst
    return { compress, quiet, busy, asked, rss: rssMiB(child.pid), cache: cacheBytes(child.pid) }
  } finally {
    child.kill('SIGTERM')
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
