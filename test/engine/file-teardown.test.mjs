// Workers terminated while a file to file copy is in flight (issue 15): the
// addon opens the paths in its first pool job and closes them in its last, so a
// Worker may die with that job queued, opening (a FIFO source blocked in open()),
// or copying. No crash, nothing left open. Run in a child process, so a crash is
// the child's exit signal rather than the test runner's death.
//
// On the JS fallback (ZCOPY_NATIVE=0) only the 'progress' scenarios run: there
// the files are opened by fs.promises.open, and Node itself leaks a descriptor
// opened for a Worker terminated while the open was in flight.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const child = fileURLToPath(new URL('./children/file-teardown.cjs', import.meta.url))

const SCENARIOS = zcopy.zeroCopyAvailable
  ? ['path-path@started', 'path-path@progress', 'path-fd@started', 'path-fd@progress', 'fd-path@started', 'fd-path@progress', 'fifo-path@started']
  : ['path-path@progress', 'path-fd@progress', 'fd-path@progress']
const WORKERS = 3 * SCENARIOS.length

function run () {
  const dir = makeTempDir('zcopy-file-teardown-')
  const env = { ...process.env, ZCOPY_TEARDOWN_DIR: dir, ZCOPY_TEARDOWN_SCENARIOS: SCENARIOS.join(','), ZCOPY_TEARDOWN_WORKERS: String(WORKERS) }
  return new Promise((resolve) => {
    execFile(process.execPath, [child], { env, timeout: 100_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      removeTempDir(dir)
      resolve({ code: error ? error.code : 0, signal: error ? error.signal : null, stdout, stderr })
    })
  })
}

it(`${WORKERS} Workers terminated mid-copy (file to file, by path and descriptor): no crash, no descriptor left open`, async () => {
  const { code, signal, stdout, stderr } = await run()
  let report = null
  try {
    report = JSON.parse(stdout)
  } catch {}
  expect({ code, signal, stderr, report }).toEqual({
    code: 0,
    signal: null,
    stderr: '',
    report: {
      workers: WORKERS,
      // Every Worker was terminated while its copy was in flight, none ran to the end...
      states: expect.toSatisfy((states) => Object.keys(states).every((outcome) => / terminated after /.test(outcome)) &&
        Object.values(states).reduce((sum, n) => sum + n, 0) === WORKERS),
      // ...and what the addon opened or dup'ed for them was closed.
      fdsBefore: expect.any(Number),
      fdsAfter: report ? report.fdsBefore : -1
    }
  })
}, 120_000)
