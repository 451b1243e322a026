// What a transfer asks the kernel about its destination (src/descriptors.cc,
// Describe): one stat and one F_GETFL per transfer, made on the event loop
// before anything is sent and used for every later decision (send from the
// loop or not, how the private dup takes bytes, whether to limit unsent bytes);
// TCP_NOTSENT_LOWAT asked of sockets only; no stat of a source that sendfile
// has already read from. Counted with strace in the main thread's own trace,
// between marker stats around each transfer (children/destination-calls.mjs).
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { zeroCopyAvailable } from '../../lib/engine/binding.js'
import { makeFile, makeTempDir, removeTempDir } from '../support/files.mjs'

const CHILD = fileURLToPath(new URL('./children/destination-calls.mjs', import.meta.url))
const hasStrace = spawnSync('strace', ['-V']).status === 0

let dir
beforeAll(() => {
  dir = makeTempDir()
  makeFile(dir, 'source.bin', 1024 * 1024)
})
afterAll(() => removeTempDir(dir))

// The main thread's trace of the child: its lines, and the pid it printed.
async function traceChild () {
  const prefix = path.join(dir, 'trace')
  const child = spawn('strace', ['-ff', '-qq', '-o', prefix, '-e', 'trace=stat,newfstatat,statx,fstat,fcntl,getsockopt,setsockopt',
    process.execPath, CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const code = await new Promise((resolve) => child.on('close', resolve))
  expect(code).toBe(0)
  const [pid, done] = out.trim().split('\n')
  expect(done).toBe('done')
  return fs.readFileSync(`${prefix}.${pid}`, 'utf8').split('\n')
}

// The calls between the markers of `name`, by kind.
function between (lines, name) {
  const begin = lines.findIndex((line) => line.includes(`/zcopy-mark-${name}-begin`))
  const end = lines.findIndex((line) => line.includes(`/zcopy-mark-${name}-end`))
  expect(begin).toBeGreaterThanOrEqual(0)
  expect(end).toBeGreaterThan(begin)
  const calls = lines.slice(begin + 1, end)
  const count = (pattern) => calls.filter((line) => pattern.test(line)).length
  return {
    socketStats: count(/S_IFSOCK/),
    fileStats: count(/S_IFREG/),
    getFlags: count(/fcntl\(\d+, F_GETFL/),
    unsentAsked: count(/getsockopt\(\d+, SOL_TCP, TCP_NOTSENT_LOWAT/)
  }
}

it.skipIf(!hasStrace || !zeroCopyAvailable)('one stat and one F_GETFL of the destination per transfer; TCP_NOTSENT_LOWAT asked of sockets only', async () => {
  const lines = await traceChild()

  // To a socket: the eager path sends the first 256 KiB from the loop, the pool
  // the rest. The source's only stat is pipeFile's own (its size).
  expect(between(lines, 'socket')).toEqual({ socketStats: 1, fileStats: 1, getFlags: 1, unsentAsked: 1 })

  // To a regular file: both ends are stat'ed once (the destination by Describe,
  // the source before its dup: nothing has read from it yet), and a file is not
  // asked for a socket option.
  expect(between(lines, 'file')).toEqual({ socketStats: 0, fileStats: 2, getFlags: 1, unsentAsked: 0 })
}, 30_000)
