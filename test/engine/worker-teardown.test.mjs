// Worker threads terminated while their transfers are in flight (issue 12, part 6):
// the addon's per-environment cleanup aborts them, closes their poll handles and
// private descriptors, lets running pool jobs finish and never calls into the
// dead environment. Run in a child process, so a crash is the child's exit
// signal rather than the test runner's death.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { native } from '../../lib/binding.js'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const child = fileURLToPath(new URL('./children/worker-teardown.cjs', import.meta.url))
const busyChild = fileURLToPath(new URL('./children/worker-busy-terminate.cjs', import.meta.url))

function run (extraEnv = {}) {
  const dir = makeTempDir('zcopy-teardown-')
  const env = { ...process.env, ZCOPY_TEARDOWN_DIR: dir, ...extraEnv }
  return new Promise((resolve) => {
    execFile(process.execPath, [child], { env, timeout: 100_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      removeTempDir(dir)
      resolve({ code: error ? error.code : 0, signal: error ? error.signal : null, stdout, stderr })
    })
  })
}

it('50 Workers terminated mid-transfer (to a stalled socket, to a file): no crash, no descriptor left open', async () => {
  const { code, signal, stdout, stderr } = await run()
  let report = null
  try {
    report = JSON.parse(stdout)
  } catch {}
  // One assertion, so that a failure shows everything: the exit, stderr, the report.
  expect({ code, signal, stderr, report }).toEqual({
    code: 0,
    signal: null,
    stderr: '',
    report: {
      workers: 50,
      // Every Worker was terminated while its transfer was running, none ran to the end...
      states: expect.toSatisfy((states) => Object.keys(states).every((outcome) => / terminated after /.test(outcome)) &&
        Object.values(states).reduce((sum, n) => sum + n, 0) === 50),
      // ...and the private dups of every transfer (and everything else) were closed.
      fdsBefore: expect.any(Number),
      fdsAfter: report ? report.fdsBefore : -1
    }
  })
}, 120_000)

// Issue 15: a pool job to a reader that keeps up sends and waits for it in the
// pool for a few milliseconds; a Worker terminated meanwhile waits for that job.
it('20 Workers terminated mid-transfer to peers that read at full speed: no crash, no descriptor left open', async () => {
  const { code, signal, stdout, stderr } = await run({ ZCOPY_TEARDOWN_PEERS: 'read', ZCOPY_TEARDOWN_WORKERS: '20' })
  let report = null
  try {
    report = JSON.parse(stdout)
  } catch {}
  expect({ code, signal, stderr, report }).toEqual({
    code: 0,
    signal: null,
    stderr: '',
    report: {
      workers: 20,
      states: expect.toSatisfy((states) => Object.keys(states).every((outcome) => / terminated after /.test(outcome)) &&
        Object.values(states).reduce((sum, n) => sum + n, 0) === 20),
      fdsBefore: expect.any(Number),
      fdsAfter: report ? report.fdsBefore : -1
    }
  })
}, 120_000)

it.skipIf(!native)('Workers terminated while they call into the addon: the process lives on', async () => {
  const result = await new Promise((resolve) => {
    execFile(process.execPath, [busyChild], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, signal: error ? error.signal : null, stdout, stderr: stderr.split('\n').slice(0, 3).join('\n') })
    })
  })
  expect(result).toEqual({ code: 0, signal: null, stdout: '{"workers":60}', stderr: '' })
}, 70_000)
