// pipeFile from a FIFO (no known length) into a caller's descriptor, aborted
// mid-way: the promise rejects with an AbortError, nothing escapes it (the child
// would die of an uncaught exception), and the caller's descriptors are still
// open and usable afterwards: zcopy never closes a descriptor it did not open.
// Each case runs in a child process (test/engine/children/abort-caller-fd.cjs).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const here = path.dirname(fileURLToPath(import.meta.url))
const child = path.join(here, 'children', 'abort-caller-fd.cjs')
const lib = path.join(here, '..', '..', 'lib', 'index.js')

async function runChild (source, destination) {
  const proc = spawn(process.execPath, [child, lib, source, destination], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  proc.stdout.on('data', (d) => { stdout += d })
  proc.stderr.on('data', (d) => { stderr += d })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
  const [code, signal] = await once(proc, 'close')
  clearTimeout(timer)
  return { code, signal, stderr, report: stdout.trim() ? JSON.parse(stdout.trim().split('\n')[0]) : null }
}

describe('a FIFO into the caller\'s descriptor, aborted mid-way', () => {
  for (const source of ['fd', 'nonblock-fd', 'path']) {
    for (const destination of ['pipe', 'socket']) {
      it(`source ${source}, destination a ${destination}: AbortError, no uncaught error, the fd still the caller's`, async () => {
        const { code, signal, stderr, report } = await runChild(source, destination)
        expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' })
        expect(report).toEqual({
          code: 'ABORT_ERR',
          name: 'AbortError',
          settledCount: 1,
          progressed: true,
          destOpen: true,
          destUsable: true,
          sourceOpen: true
        })
      })
    }
  }
})
