// On Linux, variants are made in a compression process (lib/http/compress/
// process.js): a child of the server in Linux's SCHED_IDLE class (with the
// addon; nice 19 without), that reads the file itself. On a machine so busy
// that a job waited 10 s, the job moves to a process at nice 10, so that it is
// still made. It goes when the server's process goes, even killed.

import { spawn } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { makeBundle } from '../../bench/http/bundle.js'

const LIB = fileURLToPath(new URL('../../lib/http/compress/background.js', import.meta.url))
const linux = process.platform === 'linux'

let dir
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zcopy-compress-process-'))
  await writeFile(join(dir, 'a.js'), Buffer.from('const answer = 42;\n'.repeat(4000)))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

function statOf (pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { ppid: Number(fields[1]), session: Number(fields[3]), nice: Number(fields[16]), policy: Number(fields[38]) }
}

function compressionProcesses (parent) {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      return statOf(pid).ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('compress/process.js')
    } catch {
      return false
    }
  })
}

// A server stand-in: makes one variant through compressFile() (the file open,
// as the open-file cache holds it), reports, then waits to be killed.
const CHILD = `
const fs = require('node:fs')
const zlib = require('node:zlib')
const { compressFile } = require(process.env.LIB)
const file = process.env.FILE
const fd = fs.openSync(file, 'r')
const started = performance.now()
compressFile('br', fd, fs.fstatSync(fd).size).then((made) => {
  const ok = zlib.brotliDecompressSync(made.out).equals(fs.readFileSync(file)) && made.stat.ino === fs.fstatSync(fd).ino
  process.stdout.write(JSON.stringify({ ok, ms: Math.round(performance.now() - started) }) + '\\n')
  setInterval(() => {}, 1000)
})
`

const SCHED_IDLE = 5

// Starts the stand-in on `file` → { server, line } once it has reported.
async function standIn (file, prefix = []) {
  const [command, ...rest] = [...prefix, process.execPath, '-e', CHILD]
  const server = spawn(command, rest, { env: { ...process.env, LIB, FILE: file, ZCOPY_COMPRESS_PROCESS: '' }, stdio: ['ignore', 'pipe', 'inherit'] })
  const line = await new Promise((resolve, reject) => {
    server.stdout.once('data', (chunk) => resolve(JSON.parse(chunk)))
    server.once('exit', () => reject(new Error('the server stand-in exited')))
  })
  return { server, line }
}

test.runIf(linux)('a child of the server, in its session, at SCHED_IDLE (nice 19 without the addon); gone when the server is killed', async () => {
  const { server, line } = await standIn(join(dir, 'a.js'))
  try {
    expect(line.ok).toBe(true)
    const children = compressionProcesses(server.pid)
    expect(children.length).toBeGreaterThan(0)
    for (const child of children) {
      const stat = statOf(child)
      expect(stat.session).toBe(statOf(server.pid).session)
      if (!readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('--idle')) {
        // hurried: on a machine so loaded that the job waited 10 s (see below)
        expect(line.ms).toBeGreaterThanOrEqual(10_000)
        expect(stat.nice).toBe(10)
      } else if (native !== null) expect(stat.policy).toBe(SCHED_IDLE)
      else expect(stat.nice).toBe(19)
    }
    server.kill('SIGKILL')
    for (const child of children) { // at SCHED_IDLE on a loaded machine, it may take seconds to be scheduled and exit
      let alive = true
      for (let i = 0; i < 300 && alive; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        try { process.kill(child, 0) } catch { alive = false }
      }
      expect(alive).toBe(false)
    }
  } finally {
    server.kill('SIGKILL')
  }
}, 40_000)

// A thread that never sleeps, and the server, on CPU 0 only (taskset; its
// children inherit that): a SCHED_IDLE process gets almost nothing there (the
// bundle is not made within a minute so); after 10 s its job moves to a process
// at nice 10, which gets about a tenth of the CPU and makes it.
const taskset = ['/usr/bin/taskset', '/bin/taskset'].find((file) => existsSync(file))

test.runIf(linux && native !== null && taskset !== undefined)('on a CPU kept busy, a job that waited 10 s is still made, by a process at nice 10', async () => {
  const file = join(dir, 'busy.js')
  await writeFile(file, makeBundle(128 * 1024))
  // It says when it spins: on a loaded machine a Node process can take longer
  // to start than the stand-in takes to make the variant.
  const spinners = [spawn(taskset, ['-c', '0', process.execPath, '-e', 'process.stdout.write("spinning"); for (;;) {}'], { stdio: ['ignore', 'pipe', 'ignore'] })]
  let server
  try {
    await new Promise((resolve, reject) => {
      spinners[0].stdout.once('data', resolve)
      spinners[0].once('exit', () => reject(new Error('the spinner exited')))
    })
    const made = await standIn(file, [taskset, '-c', '0'])
    server = made.server
    expect(made.line.ok).toBe(true)
    // Not before the job had waited 10 s: until then the requests' CPU is left
    // to them (the process at nice 10 would take a tenth of it).
    expect(made.line.ms).toBeGreaterThanOrEqual(10_000)
    // The process at nice 10 made it. (The one killed may still be listed: at
    // SCHED_IDLE on a busy CPU, a killed process waits for a slice to exit.)
    const children = compressionProcesses(server.pid).map(statOf)
    expect(children.filter((child) => child.policy !== SCHED_IDLE).map((child) => child.nice)).toEqual([10])
  } finally {
    for (const spinner of spinners) spinner.kill('SIGKILL')
    server?.kill('SIGKILL')
  }
}, 60_000)
