// On Linux, variants are made in a compression process (lib/http/compress/
// process.js): a child in a session of its own (so in an autogroup of its own:
// the CPU it takes is not charged to the server's group), at nice 19 with its
// group at nice 19, that reads the file itself. It goes when the server's
// process goes, even killed.

import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'

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
  return { ppid: Number(fields[1]), session: Number(fields[3]), nice: Number(fields[16]) }
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
compressFile('br', fd, fs.fstatSync(fd).size).then((made) => {
  const ok = zlib.brotliDecompressSync(made.out).equals(fs.readFileSync(file)) && made.stat.ino === fs.fstatSync(fd).ino
  process.stdout.write(JSON.stringify({ ok }) + '\\n')
  setInterval(() => {}, 1000)
})
`

test.runIf(linux)('a child in its own session at nice 19, its autogroup at nice 19; gone when the server is killed', async () => {
  const server = spawn(process.execPath, ['-e', CHILD], { env: { ...process.env, LIB, FILE: join(dir, 'a.js'), ZCOPY_COMPRESS_PROCESS: '' }, stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const line = await new Promise((resolve, reject) => {
      server.stdout.once('data', (chunk) => resolve(JSON.parse(chunk)))
      server.once('exit', () => reject(new Error('the server stand-in exited')))
    })
    expect(line).toEqual({ ok: true })
    const [child] = compressionProcesses(server.pid)
    expect(child).toBeDefined()
    const stat = statOf(child)
    expect(stat.session).toBe(child) // a session of its own, led by it
    expect(stat.session).not.toBe(statOf(server.pid).session)
    expect(stat.nice).toBe(19)
    // (A job that waited 2 s on a busy machine puts the group at nice 0 until
    // it is done; then back to 19, asynchronously.)
    let group = readFileSync(`/proc/${child}/autogroup`, 'utf8')
    for (let i = 0; i < 40 && !/nice 19/.test(group); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      group = readFileSync(`/proc/${child}/autogroup`, 'utf8')
    }
    expect(group).toMatch(/nice 19/)
    server.kill('SIGKILL')
    let alive = true
    for (let i = 0; i < 100 && alive; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      try { process.kill(child, 0) } catch { alive = false }
    }
    expect(alive).toBe(false)
  } finally {
    server.kill('SIGKILL')
  }
}, 30_000)
