import { afterEach, expect, test } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'

// The HTTP benchmark's CPU accounting (bench/http/cpu.js) on real processes: a
// child that burns a known amount of CPU, counted on its own and as a child.
const { cpuTime, endedChildrenCpuTime, perRequest } = createRequire(import.meta.url)('../../bench/http/cpu.js')

const BURN_MS = 300
const children = new Set()

afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill()
      await once(child, 'exit')
    }
  }
  children.clear()
})

// A child that spins for `ms` of user CPU, says so, then idles until killed.
async function burningChild (ms = BURN_MS) {
  const script = `const t = process.cpuUsage(); let x = 0
    while (process.cpuUsage(t).user < ${ms * 1000}) for (let i = 0; i < 1e6; i++) x += i
    console.log('burnt', x > 0); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(child)
  await once(child.stdout, 'data')
  return child
}

test('cpuTime reads a process\'s user and system seconds', async () => {
  const child = await burningChild()
  const { user, system } = cpuTime(child.pid)
  expect(user).toBeGreaterThanOrEqual(BURN_MS / 1000 - 0.02)
  expect(user).toBeLessThan(BURN_MS / 1000 + 1)
  expect(system).toBeGreaterThanOrEqual(0)
})

test('cpuTime adds the live children of the process (nginx\'s workers)', async () => {
  await burningChild()
  const own = process.cpuUsage().user / 1e6
  const withChildren = cpuTime(process.pid).user
  expect(withChildren - own).toBeGreaterThanOrEqual(BURN_MS / 1000 - 0.05)
})

// The load generator's CPU: a child counts once it has ended and been waited for
// (Node reaps it before 'exit'), and not before.
test('endedChildrenCpuTime counts a child that ended, once it is waited for', async () => {
  const before = endedChildrenCpuTime()
  const child = await burningChild()
  expect(endedChildrenCpuTime()).toEqual(before) // still running: not counted yet
  child.kill()
  await once(child, 'exit')
  const after = endedChildrenCpuTime()
  expect(after.user - before.user).toBeGreaterThanOrEqual(BURN_MS / 1000 - 0.02)
  expect(after.user - before.user).toBeLessThan(BURN_MS / 1000 + 1)
  expect(after.system).toBeGreaterThanOrEqual(before.system)
})

test('cpuTime is null for a process that is gone', async () => {
  const child = await burningChild(0)
  child.kill()
  await once(child, 'exit')
  expect(cpuTime(child.pid)).toBe(null)
})

test('perRequest turns two readings into microseconds per request', () => {
  const before = { user: 1, system: 2 }
  const after = { user: 1.5, system: 2.25 }
  expect(perRequest(before, after, 10_000)).toEqual({ user: 50, system: 25 })
  expect(perRequest(null, after, 10_000)).toBe(null)
  expect(perRequest(before, null, 10_000)).toBe(null)
  expect(perRequest(before, after, 0)).toBe(null)
})
