// Worker threads terminated while their transfers are in flight (issue 12, part 6):
// the addon's per-environment cleanup aborts them, closes their poll handles and
// private descriptors, lets running pool jobs finish and never calls into the
// dead environment. Run in a child process, so a crash is the child's exit
// signal rather than the test runner's death.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { expectTerminatedCleanly, runTeardownChild } from '../support/teardown.mjs'

const child = fileURLToPath(new URL('./children/worker-teardown.cjs', import.meta.url))
const busyChild = fileURLToPath(new URL('./children/worker-busy-terminate.cjs', import.meta.url))

it('50 Workers terminated mid-transfer (to a stalled socket, to a file): no crash, no descriptor left open', async () => {
  expectTerminatedCleanly(await runTeardownChild(child), 50)
}, 120_000)

// Issue 15: a pool job to a reader that keeps up sends and waits for it in the
// pool for a few milliseconds; a Worker terminated meanwhile waits for that job.
it('20 Workers terminated mid-transfer to peers that read at full speed: no crash, no descriptor left open', async () => {
  expectTerminatedCleanly(await runTeardownChild(child, { ZCOPY_TEARDOWN_PEERS: 'read', ZCOPY_TEARDOWN_WORKERS: '20' }), 20)
}, 120_000)

it.skipIf(!native)('Workers terminated while they call into the addon: the process lives on', async () => {
  const result = await new Promise((resolve) => {
    execFile(process.execPath, [busyChild], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, stdout, stderr: stderr.split('\n').slice(0, 3).join('\n') })
    })
  })
  expect(result).toEqual({ code: 0, signal: null, stdout: '{"workers":60}', stderr: '' })
}, 70_000)
