// The native lane's per-environment cleanup (src/lane.cc): Workers that own a
// lane listening with connections open (one with a request lent to
// JavaScript that never answers) are terminated; every descriptor and handle
// is closed, the clients see their connections closed, the process
// lives on. In a child process, so a crash is the child's, not the runner's.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'

const child = fileURLToPath(new URL('./children/lane-teardown.cjs', import.meta.url))

it.runIf(native !== null)('Workers terminated with a lane listening and connections open: nothing left open, no crash', async () => {
  const result = await new Promise((resolve) => {
    execFile(process.execPath, [child], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, stdout: stdout.trim(), stderr })
    })
  })
  expect(result).toEqual({ code: 0, signal: null, stdout: JSON.stringify({ workers: 10, leaked: [], clientsClosed: 30 }), stderr: '' })
}, 70_000)
