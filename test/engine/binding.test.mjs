// Which implementation is loaded, and that the package says so honestly.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import zcopy from '../../lib/index.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

function probe (env) {
  return JSON.parse(execFileSync(process.execPath, ['-p', 'JSON.stringify(require(".").zeroCopyAvailable)'], {
    cwd: root,
    env: { ...process.env, ...env },
    timeout: 60_000,
    killSignal: 'SIGKILL'
  }).toString())
}

it('loads the native addon on Linux unless ZCOPY_NATIVE=0', () => {
  const expected = process.platform === 'linux' && process.env.ZCOPY_NATIVE !== '0'
  expect(zcopy.zeroCopyAvailable).toBe(expected)
})

it('ZCOPY_NATIVE=0 selects the fallback in a fresh process', () => {
  expect(probe({ ZCOPY_NATIVE: '0' })).toBe(false)
  expect(probe({ ZCOPY_NATIVE: '' })).toBe(process.platform === 'linux')
})

it('is importable from ESM with named exports', async () => {
  const mod = await import('zcopy')
  for (const name of ['sendfile', 'pipeFile', 'createReadStream', 'sendFile', 'serveStatic']) {
    expect(typeof mod[name]).toBe('function')
  }
  expect(typeof mod.zeroCopyAvailable).toBe('boolean')
})
