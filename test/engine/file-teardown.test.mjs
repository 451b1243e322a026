// Workers terminated while a file to file copy is in flight (issue 15): the
// addon opens the paths in its first pool job and closes them in its last, so a
// Worker may die with that job queued, opening (a FIFO source blocked in open()),
// or copying. No crash, nothing left open. Run in a child process, so a crash is
// the child's exit signal rather than the test runner's death.
//
// On the JS fallback (ZCOPY_NATIVE=0) only the 'progress' scenarios run: there
// the files are opened by fs.promises.open, and Node itself leaks a descriptor
// opened for a Worker terminated while the open was in flight.
import { fileURLToPath } from 'node:url'
import { it } from 'vitest'
import zcopy from '../../lib/index.js'
import { expectTerminatedCleanly, runTeardownChild } from '../support/teardown.mjs'

const child = fileURLToPath(new URL('./children/file-teardown.cjs', import.meta.url))

const SCENARIOS = zcopy.zeroCopyAvailable
  ? ['path-path@started', 'path-path@progress', 'path-fd@started', 'path-fd@progress', 'fd-path@started', 'fd-path@progress', 'fifo-path@started']
  : ['path-path@progress', 'path-fd@progress', 'fd-path@progress']
const WORKERS = 3 * SCENARIOS.length

it(`${WORKERS} Workers terminated mid-copy (file to file, by path and descriptor): no crash, no descriptor left open`, async () => {
  const env = { ZCOPY_TEARDOWN_SCENARIOS: SCENARIOS.join(','), ZCOPY_TEARDOWN_WORKERS: String(WORKERS) }
  expectTerminatedCleanly(await runTeardownChild(child, env), WORKERS)
}, 120_000)
