// The native lane writes the answers to one read's pipelined requests
// together (issue 64): the heads and in-memory bodies of those it answers go
// by one sendmsg, as nginx writes a chain, up to a request it does not answer
// (lent to Node's server), one with a file body, or one that closes. One
// sendmsg per answer cost it 12.1 µs of CPU per pipelined 4 KiB answer where
// nginx spent 8.2 (docs/benchmarks-log.md, 2026-12-06 midday). Counted with
// strace on the server's main thread (the lane's; Node's own writes are
// write/writev, a lent answer's send is sendto). And when the socket takes
// only part of a batch, the rest goes in order once the client reads.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { exchange, get, makeRoot, portOf, startServe } from './serve-helpers.mjs'

// strace, allowed to attach to a running process (ptrace rights: root, or
// Yama's ptrace_scope 0).
const canAttach = (() => {
  if (spawnSync('strace', ['-V']).status !== 0) return false
  const sleeper = spawn('sleep', ['10'])
  const { stderr } = spawnSync('strace', ['-p', String(sleeper.pid), '-e', 'trace=none', '-o', '/dev/null'], { timeout: 1000, encoding: 'utf8' })
  sleeper.kill()
  return /attached/.test(stderr)
})()

const files = { 'a.txt': 'a'.repeat(4096), 'b.txt': 'b'.repeat(100), 'c.txt': 'c'.repeat(7) }
const big = Buffer.alloc(200 * 1024, 'z') // above what is ever kept in memory: its body goes by sendfile
const root = makeRoot({ ...files, 'big.bin': big })
const traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-gather-trace-'))
let lane
const etags = {}
beforeAll(async () => {
  if (native === null) return
  lane = await startServe(root, ['--no-compress', '--quiet'])
  // Node answers a path's first request; the lane replays the ones after.
  for (const name of Object.keys(files)) {
    etags[name] = (await get(lane, `/${name}`)).headers.etag
    for (let i = 0; i < 3; i++) {
      await get(lane, `/${name}`, `If-None-Match: ${etags[name]}\r\n`)
      await exchange(lane, [head(name, true)])
    }
  }
  for (let i = 0; i < 3; i++) await get(lane, '/big.bin')
})
afterAll(async () => {
  if (lane) await lane.stop()
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(traceDir, { recursive: true, force: true })
})

const revalidate = (name, close = false) =>
  `GET /${name} HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: ${etags[name]}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`
const head = (name, close = false) => `HEAD /${name} HTTP/1.1\r\nHost: localhost\r\n${close ? 'Connection: close\r\n' : ''}\r\n`

// The sendmsg calls of the server's main thread while `run()` runs, counted
// by strace attached to it: → [calls, run()'s result].
async function sendmsgsDuring (run) {
  const out = path.join(traceDir, `trace-${Math.random().toString(36).slice(2)}`)
  const strace = spawn('strace', ['-p', String(lane.cli.child.pid), '-e', 'trace=sendmsg', '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  strace.stderr.on('data', (chunk) => { stderr += chunk })
  while (!/attached/.test(stderr)) {
    if (strace.exitCode !== null) throw new Error(`strace: ${stderr}`)
    await sleep(10)
  }
  const result = await run()
  await sleep(100) // (nothing else writes meanwhile)
  strace.kill('SIGINT') // detaches, its output written
  await once(strace, 'exit')
  const calls = fs.readFileSync(out, 'utf8').split('\n').filter((line) => line.startsWith('sendmsg('))
  return [calls.length, result]
}

// The status lines of the answers in `bytes`, in order.
const statusLines = (bytes) => bytes.toString('latin1').match(/HTTP\/1\.1 \d{3} [^\r]*/g)

describe.runIf(native !== null && canAttach)('zcopy serve --native-lane: pipelined answers go together', () => {
  test('eight answers from memory to one read: one sendmsg', async () => {
    const requests = ['a.txt', 'b.txt', 'c.txt', 'a.txt'].flatMap((name) => [revalidate(name), head(name)])
    requests[requests.length - 1] = head('a.txt', true)
    const [calls, bytes] = await sendmsgsDuring(() => exchange(lane, [requests.join('')]))
    expect(statusLines(bytes)).toEqual(Array(4).fill(['HTTP/1.1 304 Not Modified', 'HTTP/1.1 200 OK']).flat())
    expect(bytes.toString('latin1').match(/Content-Length: \d+/g)).toEqual(
      ['a.txt', 'b.txt', 'c.txt', 'a.txt'].map((name) => `Content-Length: ${files[name].length}`))
    expect(calls).toBe(1) // one per answer before
  })

  test('a request the lane does not answer, and one with a file body, end a batch: the answers stay in order', async () => {
    const requests = [revalidate('a.txt'), head('b.txt'),
      'GET /b.txt?lent HTTP/1.1\r\nHost: localhost\r\n\r\n', // no row: lent to Node's server
      revalidate('c.txt'), head('a.txt'),
      'GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n', // its head with the batch, then sendfile
      head('b.txt'), head('c.txt', true)]
    const [calls, bytes] = await sendmsgsDuring(() => exchange(lane, [requests.join('')]))
    expect(statusLines(bytes)).toEqual(['304 Not Modified', '200 OK', '200 OK', '304 Not Modified', '200 OK', '200 OK', '200 OK', '200 OK']
      .map((line) => `HTTP/1.1 ${line}`))
    const text = bytes.toString('latin1')
    expect(text).toContain(`\r\n\r\n${files['b.txt']}HTTP/1.1 304`) // Node's answer, between the lane's
    expect(text).toContain(`\r\n\r\n${big.toString('latin1')}HTTP/1.1 200`)
    expect(calls).toBe(3) // the two before the lent request, the three up to the file's, the two after
  })
})

describe.runIf(native !== null)('zcopy serve --native-lane: a batch the socket takes in part', () => {
  test('40,000 pipelined answers to a client that reads late all come, in order', async () => {
    const names = ['a.txt', 'b.txt', 'c.txt']
    const count = 40_000
    const socket = net.connect({ port: portOf(lane), host: '127.0.0.1' })
    await once(socket, 'connect')
    socket.pause()
    const chunks = []
    socket.on('data', (chunk) => chunks.push(chunk))
    for (let i = 0; i < count; i += 1000) {
      let burst = ''
      for (let j = i; j < i + 1000; j++) burst += j % 2 === 0 ? head(names[j % 3], j === count - 1) : revalidate(names[j % 3], j === count - 1)
      socket.write(burst)
    }
    await sleep(500) // the lane fills the socket and waits for room
    socket.resume()
    await once(socket, 'end')
    socket.destroy()
    const text = Buffer.concat(chunks).toString('latin1')
    const answers = text.split('HTTP/1.1 ').slice(1)
    expect(answers.length).toBe(count)
    const wrong = answers.findIndex((answer, j) => {
      const name = names[j % 3]
      return !answer.includes(`ETag: ${etags[name]}\r\n`) || !answer.startsWith(j % 2 === 0 ? '200 OK' : '304 Not Modified')
    })
    expect(wrong).toBe(-1)
    expect(text.length).toBeGreaterThan(8 * 1024 * 1024) // more than the sockets hold
  }, 60_000)
})
