'use strict'

// Issue 62, item 7: what a crawler costs the compression cache. A client asks
// for every one of P pages of 16 KiB (distinct HTML-like text) in turn with
// Accept-Encoding: gzip, deflate, br, as a crawler does, round after round.
// After each round, once nothing is being made, the compression CPU of that
// round is read: the CPU time of the compression processes (/proc, every
// child of this process running compress/process.js, plus the children
// reaped: cutime + cstime), so that the same figure is read from any build.
// Two set-ups:
//   default     serveStatic(root, { compress: true }) (memoryCache 32 MiB: every
//               variant fits)
//   small-cache memoryCache: 0 and cacheBytes 2 MiB: the variants do not all
//               fit, the least recently used are evicted every round
//
//   node bench/http/compress-crawler.js [--pages 1500] [--rounds 4] [--pause 0] [--only default,small-cache] [--lib DIR]
//
// --pause S: seconds between a round's end and the next round (a crawler that
// comes back later; the CPU budget is per minute).
// --lib DIR: the library to measure (default: this checkout's lib), e.g.
// another checkout's `lib` to compare builds.

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { parseOptions } = require('../lib/usage')

const { values: options } = parseOptions(__filename, {
  options: {
    pages: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '4' },
    pause: { type: 'string', default: '0' },
    only: { type: 'string', default: 'default,small-cache' },
    lib: { type: 'string', default: path.join(__dirname, '../../lib') }
  }
})
const PAGES = Number(options.pages)
const ROUNDS = Number(options.rounds)
const PAUSE_MS = Number(options.pause) * 1000
const ONLY = options.only.split(',')
const LIB = path.resolve(options.lib)
const { serveStatic } = require(LIB)
const TICK = 100 // clock ticks a second (USER_HZ)

const SETUPS = {
  default: { compress: true },
  'small-cache': { memoryCache: 0, compress: { cacheBytes: 2 * 1024 * 1024 } }
}

// Page `i`: 16 KiB of words that vary from page to page, as a site's pages do.
function page (i) {
  const words = ['zcopy', 'sendfile', 'variant', 'crawler', 'cache', 'brotli', 'server', 'page', 'request', 'kernel', 'socket', 'budget']
  let seed = i * 2654435761 >>> 0
  const parts = [`<!doctype html><title>Page ${i}</title><main>`]
  let length = parts[0].length
  while (length < 16 * 1024) {
    seed = (seed * 1103515245 + 12345) >>> 0
    const part = seed % 7 === 0 ? `</p>\n<p id="p${seed % 1000}">` : `${words[seed % words.length]}${seed % 97} `
    parts.push(part)
    length += part.length
  }
  return parts.join('').slice(0, 16 * 1024)
}

// CPU seconds of this process's compression processes, live and reaped.
function compressionCpu () {
  const own = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  let ticks = Number(own[13]) + Number(own[14]) // cutime, cstime
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const fields = fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')
      if (Number(fields[1]) !== process.pid) continue
      if (!fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('compress/process.js')) continue
      ticks += Number(fields[11]) + Number(fields[12]) // utime, stime
    } catch {}
  }
  return ticks / TICK
}

function get (port, agent, file) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: `/${file}`, agent, headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.headers['content-encoding'] || 'identity'))
    }).on('error', reject)
  })
}

async function run (name, root) {
  const serve = serveStatic(root, SETUPS[name])
  const server = http.createServer((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const started = Date.now()
  let total = 0
  console.log(`\n## ${name} (${PAGES} pages of 16 KiB, ${LIB})`)
  console.log('| round | at (s) | compression CPU (s) | br answers | identity answers |')
  console.log('|---:|---:|---:|---:|---:|')
  for (let round = 1; round <= ROUNDS; round++) {
    if (round > 1) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
    const before = compressionCpu()
    const answers = { br: 0, identity: 0 }
    for (let i = 0; i < PAGES; i++) {
      const coding = await get(port, agent, `p${i}.html`)
      answers[coding] = (answers[coding] || 0) + 1
    }
    await serve.compressed()
    const cpu = compressionCpu() - before
    total += cpu
    console.log(`| ${round} | ${((Date.now() - started) / 1000).toFixed(0)} | ${cpu.toFixed(1)} | ${answers.br} | ${answers.identity} |`)
  }
  const stats = serve.stats().compressed
  console.log(`total ${total.toFixed(1)} s; made ${stats.made}, evicted ${stats.evicted}${stats.cheap === undefined ? '' : `, cheap ${stats.cheap}, over budget ${stats.overBudget}`}`)
  agent.destroy()
  server.close()
  await serve.close()
}

async function main () {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-crawler-'))
  try {
    for (let i = 0; i < PAGES; i++) fs.writeFileSync(path.join(root, `p${i}.html`), page(i))
    console.log(`# ${new Date().toISOString()} Node ${process.version}, ${os.cpus().length} CPUs`)
    for (const name of ONLY) await run(name, root)
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
