// The compression process (lib/http/compress/process.js) when the server goes
// first, in the middle of a job: it never prints a stack trace (an EPIPE on
// its answer) to the stderr it shares with the server, and, when the server
// exits (process.exit()), it is killed with it rather than left to finish a
// job nobody will take.

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'

const LIB = fileURLToPath(new URL('../../lib', import.meta.url))
const linux = process.platform === 'linux'
const MiB = 1024 * 1024

// A server: serves ROOT with compression, asks once for big.js in br (a job
// for the compression process, which reads the file itself), waits until a
// compression process has read it all (its rchar in /proc/PID/io: the job is
// under way; with EARLY=1, until the process is there, still starting),
// writes that process's pid on stdout, then exits at once (EXIT=1) or waits
// to be killed.
const SERVER = `
const fs = require('node:fs')
const http = require('node:http')
const { serveStatic } = require(process.env.LIB)
const size = fs.statSync(process.env.ROOT + '/big.js').size
const serve = serveStatic(process.env.ROOT, { compress: { maxSize: size } })
const server = http.createServer((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
function compressing () {
  for (const name of fs.readdirSync('/proc')) {
    try {
      if (!/^\\d+$/.test(name) || !fs.readFileSync('/proc/' + name + '/cmdline', 'utf8').includes('compress/process.js')) continue
      if (fs.readFileSync('/proc/' + name + '/stat', 'utf8').split(') ')[1].split(' ')[1] !== String(process.pid)) continue
      if (process.env.EARLY === '1') return name
      if (Number(/rchar: (\\d+)/.exec(fs.readFileSync('/proc/' + name + '/io', 'utf8'))[1]) >= size) return name
    } catch {}
  }
  return null
}
server.listen(0, '127.0.0.1', () => {
  http.get({ host: '127.0.0.1', port: server.address().port, path: '/big.js', headers: { 'accept-encoding': 'br' } }, (res) => {
    res.resume()
    res.on('end', function poll () {
      const pid = compressing()
      if (pid === null) return setTimeout(poll, 10)
      process.stdout.write(pid + '\\n')
      if (process.env.EXIT === '1') process.exit(0)
    })
  })
})
`

let dir
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zcopy-compress-child-exit-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

// `mib` MiB of JavaScript that brotli (quality 9 above 1 MiB) compresses to
// about half, slowly: string literals of random hex, about 0.3 s of one CPU
// per MiB here, more on a loaded machine.
async function bigFile (root, mib) {
  const hex = randomBytes(Math.round(mib * MiB / 2)).toString('hex')
  const lines = []
  for (let at = 0; at < hex.length; at += 64) lines.push(`export const k${at / 64} = '${hex.slice(at, at + 64)}'\n`)
  await writeFile(join(root, 'big.js'), lines.join(''))
}

// The compression processes (by their command line) that inherited `mark` in
// their environment.
function compressionProcesses (mark) {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('compress/process.js') &&
        readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`ZCOPY_TEST_MARK=${mark}`)
    } catch {
      return false
    }
  })
}

// Runs the server on a file of `mib` MiB; `exit`: it exits by itself once the
// job is under way, else it is killed (SIGKILL) then, or (`early`) as soon
// as its compression process is there. → { stderr (all of it:
// until EOF, which comes once the compression process is gone too, since it
// writes to the same pipe), afterExitMs (from the server's exit to that EOF),
// child (the compression process's pid), mark }.
async function run (name, mib, { exit = false, early = false } = {}) {
  const root = join(dir, name)
  await rm(root, { recursive: true, force: true })
  await mkdir(root)
  await bigFile(root, mib)
  const mark = `${process.pid}-${name}`
  const server = spawn(process.execPath, ['-e', SERVER], {
    env: { ...process.env, LIB, ROOT: root, EXIT: exit ? '1' : '', EARLY: early ? '1' : '', ZCOPY_TEST_MARK: mark, ZCOPY_COMPRESS_PROCESS: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  server.stderr.setEncoding('utf8')
  server.stderr.on('data', (chunk) => { stderr += chunk })
  const eof = new Promise((resolve) => server.stderr.on('end', () => resolve(Date.now())))
  const exited = new Promise((resolve) => server.once('exit', () => resolve(Date.now())))
  try {
    const child = await new Promise((resolve, reject) => {
      server.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())))
      server.once('exit', () => reject(new Error(`the server exited before its job started: ${stderr}`)))
    })
    if (!exit) server.kill('SIGKILL')
    const exitedAt = await exited
    const endedAt = await Promise.race([eof, new Promise((resolve) => setTimeout(resolve, 90_000, null))])
    return { stderr, afterExitMs: endedAt === null ? Infinity : endedAt - exitedAt, child, mark }
  } finally {
    server.kill('SIGKILL')
  }
}

function gone (pid) {
  try {
    return !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('compress/process.js')
  } catch {
    return true
  }
}

// 48 MiB: about 20 s of brotli here (left to finish it, the process outlived
// the server by 20 to 22 s), far more than the bound below, which leaves the
// killed process seconds to be scheduled (at SCHED_IDLE, on a loaded machine)
// and die.
test.runIf(linux)('the server exits (process.exit) in the middle of a job: the compression process goes with it, silently', async () => {
  const { stderr, afterExitMs, child, mark } = await run('exit', 48, { exit: true })
  expect(stderr).not.toMatch(/EPIPE|ERR_IPC_CHANNEL_CLOSED|Error/)
  expect(afterExitMs).toBeLessThan(8_000)
  expect(gone(child)).toBe(true)
  expect(compressionProcesses(mark)).toEqual([])
}, 120_000)

// Killed, the server runs no code: its compression process, killed while it
// starts (a 64 KiB job, a tenth of a second of CPU, comes after), finds no one
// to answer (its "ready" or its result) and exits without a word. (Killed in
// the middle of a long job, it would first finish it, at SCHED_IDLE, on the
// CPU time others leave: on a busy machine, minutes.)
test.runIf(linux)('the server is killed (SIGKILL) as its compression process starts: that process exits silently', async () => {
  const { stderr, afterExitMs, child, mark } = await run('kill', 1 / 16, { early: true })
  expect(stderr).not.toMatch(/EPIPE|ERR_IPC_CHANNEL_CLOSED|Error/)
  expect(afterExitMs).toBeLessThan(90_000)
  expect(gone(child)).toBe(true)
  expect(compressionProcesses(mark)).toEqual([])
}, 120_000)
