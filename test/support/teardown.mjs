// The Worker-teardown tests' shared half: a child process terminates Workers
// while their transfers are in flight and prints a report; a crash is the
// child's exit signal rather than the test runner's death.
import { execFile } from 'node:child_process'
import { expect } from 'vitest'
import { makeTempDir, removeTempDir } from './files.mjs'

// Runs `child` with a fresh ZCOPY_TEARDOWN_DIR (removed after) and `env` added.
// → { code, signal, stdout, stderr }
export function runTeardownChild (child, env = {}) {
  const dir = makeTempDir('zcopy-teardown-')
  return new Promise((resolve) => {
    execFile(process.execPath, [child], { env: { ...process.env, ZCOPY_TEARDOWN_DIR: dir, ...env }, timeout: 100_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      removeTempDir(dir)
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, stdout, stderr })
    })
  })
}

// The child exited cleanly, every one of `workers` Workers was terminated while
// its transfer was in flight (none ran to the end), and what the addon opened or
// dup'ed for them was closed. One assertion, so that a failure shows everything:
// the exit, stderr, the report.
export function expectTerminatedCleanly ({ code, signal, stdout, stderr }, workers) {
  let report = null
  try {
    report = JSON.parse(stdout)
  } catch {}
  expect({ code, signal, stderr, report }).toEqual({
    code: 0,
    signal: null,
    stderr: '',
    report: {
      workers,
      states: expect.toSatisfy((states) => Object.keys(states).every((outcome) => / terminated after /.test(outcome)) &&
        Object.values(states).reduce((sum, n) => sum + n, 0) === workers),
      leftOpen: []
    }
  })
}
