import { afterEach, beforeEach, expect, test } from 'vitest'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, groupGone, runCli, startCli } from './cli.mjs'

// bench/http/run.js --pin: each server's processes and threads on CPU 0, the
// load generator on CPU 1, read off /proc while a short run goes on.
const RUN = fileURLToPath(new URL('../../bench/http/run.js', import.meta.url))
const canPin = os.availableParallelism() >= 2 && spawnSync('taskset', ['-V']).error === undefined &&
  spawnSync('nginx', ['-v']).status === 0 && spawnSync('wrk', ['--version']).error === undefined

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-pin-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

// → [thread id, command name, CPUs allowed, command line] of every thread in
// process group `group`.
function threadsOf (group) {
  const found = []
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== group) continue
      const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
        found.push([tid, comm, /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)[1], command])
      }
    } catch {} // gone meanwhile
  }
  return found
}

test.skipIf(!canPin)('--pin: the servers\' threads on CPU 0, wrk on CPU 1, said in the load line', async () => {
  const cli = startCli(['--pin', '--servers', 'zcopy serve,nginx', '--cases', '4k', '--seconds', '2', '--rounds', '1', '--no-memory'], { cli: RUN, env: { TMPDIR: tmpdir } })
  const last = new Map() // thread id → [command name, the CPUs it was last seen allowed, command line]
  const watching = setInterval(() => {
    for (const [tid, comm, cpus, command] of threadsOf(cli.child.pid)) last.set(tid, [comm, cpus, command])
  }, 50)
  const { code, stdout, stderr } = await cli.output()
  clearInterval(watching)
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/; each server pinned to CPU 0, the load generator to CPU 1$/m)
  // Each thread as last seen (a server is pinned once it listens).
  const cpusOf = (name, only = /(?:)/) => new Set([...last.values()].filter(([comm, , command]) => comm === name && only.test(command)).map(([, cpus]) => cpus))
  expect([...cpusOf('wrk', / -c16 /)]).toEqual(['1']) // the load (load.js's `wrk --version` is not)
  expect([...cpusOf('nginx', /^nginx: (master|worker) process/)]).toEqual(['0']) // the server (nginx.js's `nginx -v` is not)
  // zcopy serve's threads (main, libuv's pool, V8's) on 0; the runner, also
  // node, is not pinned.
  expect([...cpusOf('node')].sort()).toEqual(['0', '0-1'])
  expect(stdout).toMatch(/^\| zcopy ÷ nginx \| \d+\.\d\d× \|$/m)
}, 120_000)

test('--pin with --workers: one line, exit code 2', async () => {
  expectOneLineUsageError(await runCli(['--pin', '--workers', '2'], { cli: RUN }), '--pin runs without --workers (the server is pinned to one CPU)', 'bench/http/run.js')
})

// --pipeline N: wrk writes N requests at a time; the 304s are still checked
// (a cell would say when a server's answer is not one).
test.skipIf(!canPin)('--pipeline 4: the revalidations pipelined, said in the load line, every answer a 304', async () => {
  const cli = startCli(['--pin', '--pipeline', '4', '--servers', 'zcopy serve,nginx', '--cases', 'revalidate-4k', '--seconds', '1', '--rounds', '1', '--no-memory'], { cli: RUN, env: { TMPDIR: tmpdir } })
  const { code, stdout, stderr } = await cli.output()
  expect(await groupGone(cli)).toBe(true)
  expect(stderr).toBe('')
  expect(code).toBe(0)
  expect(stdout).toMatch(/; each server pinned to CPU 0, the load generator to CPU 1; 4 requests pipelined per write$/m)
  expect(stdout).toMatch(/^\| zcopy ÷ nginx \| \d+\.\d\d× \|$/m)
  expect(stdout).not.toMatch(/not 304|errors|\*$/m)
  expect(fs.readdirSync(tmpdir)).toEqual([]) // the wrapper script removed with the rest
}, 120_000)

test('--pipeline that is no count, or with a many-files case: one line, exit code 2', async () => {
  expectOneLineUsageError(await runCli(['--pipeline', '0', '--cases', '4k'], { cli: RUN }), "--pipeline takes a whole number from 1 to 1000, not '0'", 'bench/http/run.js')
  expectOneLineUsageError(await runCli(['--pipeline', '8', '--cases', 'files-100'], { cli: RUN }), '--pipeline runs the one-file and revalidate cases only', 'bench/http/run.js')
})
