// Opening a file never blocks a thread-pool thread. A regular file flipped with a
// FIFO between the server's stat and its open: an open(2) of a FIFO without a
// writer blocks for ever, unless it is non-blocking. With UV_THREADPOOL_SIZE=4 in a
// server process of its own, a child flips four files ↔ FIFO while clients request
// them (serveStatic, and sendFile with an absolute path: eight cache entries, more
// than the pool has threads to lose): every request is answered,
// 200 with the file's bytes or 404, never a hang, and fs.promises.readFile of
// another file, timed inside the server, stays fast throughout.

import { execFileSync, fork, spawn } from 'node:child_process'
import { once } from 'node:events'
import { linkSync, renameSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const FLIP_MS = Number(process.env.ZCOPY_FIFO_MS || 3000)
const NAMES = ['flip0.txt', 'flip1.txt', 'flip2.txt', 'flip3.txt']
const ROUTES = ['/static/', '/abs/']
const CLIENTS = 16
const HANG_MS = 3000 // an answer later than this is a hang
const SERVER = fileURLToPath(new URL('./children/fifo-server.mjs', import.meta.url))
const FLIPPER = fileURLToPath(new URL('./children/fifo-flipper.mjs', import.meta.url))
const CONTENT = 'a regular file, sometimes\n'

let dir, root

beforeAll(() => {
  dir = makeTempDir('zcopy-fifo-')
  root = join(dir, 'root')
  execFileSync('mkdir', [root])
  writeFileSync(join(root, '.parked-file'), CONTENT)
  execFileSync('mkfifo', [join(root, '.parked-fifo')])
  for (const name of NAMES) linkSync(join(root, '.parked-file'), join(root, name))
  writeFileSync(join(dir, 'other.txt'), 'another file\n'.repeat(100))
})

afterAll(() => removeTempDir(dir))

function put (name, which) {
  linkSync(join(root, which === 'fifo' ? '.parked-fifo' : '.parked-file'), join(root, '.placing'))
  renameSync(join(root, '.placing'), join(root, name))
}

// → { status, body } or { hang: true } when nothing complete came within HANG_MS.
function get (agent, port, path) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => { clearTimeout(timer); resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }) })
    })
    const timer = setTimeout(() => { req.destroy(); resolve({ hang: true }) }, HANG_MS)
    req.on('error', () => {}) // destroyed on a hang: already resolved
  })
}

test(`files flipped with a FIFO for ${FLIP_MS} ms, 4 pool threads: every request is answered, readFile stays fast`, async () => {
  const server = fork(SERVER, [root, join(dir, 'other.txt')], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS })
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const [{ port }] = await once(server, 'message')
    const paths = ROUTES.flatMap((route) => NAMES.map((name) => route + name))
    for (const path of paths) expect(await get(agent, port, path)).toEqual({ status: 200, body: CONTENT })

    const flipper = spawn(process.execPath, [FLIPPER, root, String(FLIP_MS), ...NAMES], { stdio: ['ignore', 'pipe', 'inherit'] })
    let flips = ''
    flipper.stdout.on('data', (chunk) => { flips += chunk })
    const flipperDone = once(flipper, 'close')
    let flipping = true
    flipperDone.then(() => { flipping = false })

    const answers = []
    const readFileMs = []
    let probeHangs = 0
    const clients = Array.from({ length: CLIENTS }, async (_, i) => {
      const path = paths[i % paths.length]
      while (flipping) {
        const answer = await get(agent, port, path)
        answers.push(answer)
        if (answer.hang) return // this client's connection is stuck; the others go on
      }
    })
    const probe = (async () => {
      while (flipping) {
        const answer = await get(probeAgent, port, '/readfile')
        if (answer.hang) probeHangs++
        else readFileMs.push(JSON.parse(answer.body).ms)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    await Promise.all([...clients, probe])
    const [code] = await flipperDone
    expect(code).toBe(0)

    const hangs = answers.filter((answer) => answer.hang).length
    const statuses = {}
    for (const answer of answers) statuses[answer.status || 'hang'] = (statuses[answer.status || 'hang'] || 0) + 1
    const sorted = [...readFileMs].sort((a, b) => a - b)
    const quantile = (q) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2) : '-'
    console.log(`${process.env.ZCOPY_NATIVE === '0' ? 'JS fallback' : 'native'}: ${flips} flips, ${answers.length} requests ` +
      `${JSON.stringify(statuses)}; readFile in the server: ${readFileMs.length} probes, median ${quantile(0.5)} ms, ` +
      `p99 ${quantile(0.99)} ms, max ${sorted.length ? sorted.at(-1).toFixed(2) : '-'} ms, ${probeHangs} hung`)

    expect(Number(flips)).toBeGreaterThan(1000)
    expect(hangs).toBe(0)
    expect(probeHangs).toBe(0)
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.body).toBe(CONTENT)
      else expect(answer.status).toBe(404)
    }
    expect(statuses[200]).toBeGreaterThan(0)
    expect(Math.max(...readFileMs)).toBeLessThan(1000) // a busy 2-core box; a parked pool never answers

    // Once the flipping stops, each name answers for what it is, on every route.
    for (const name of NAMES) {
      for (const route of ROUTES) {
        put(name, 'fifo')
        expect(await get(agent, port, route + name)).toEqual({ status: 404, body: '' })
        put(name, 'file')
        expect(await get(agent, port, route + name)).toEqual({ status: 200, body: CONTENT })
      }
    }
    const after = await get(probeAgent, port, '/readfile')
    expect(after.hang).toBeUndefined()
  } finally {
    agent.destroy()
    probeAgent.destroy()
    server.kill('SIGKILL')
    await once(server, 'exit').catch(() => {})
  }
})
