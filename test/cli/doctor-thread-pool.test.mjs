// The thread-pool size `zcopy doctor` reports is the one libuv starts: checked
// against the threads a real Node process has once its pool is running.
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const { threadPool } = createRequire(import.meta.url)('../../bin/lib/doctor/thread-pool.js')

// One fs call starts the whole pool; then count this process's threads.
const COUNT_THREADS = `
  const fs = require('fs')
  fs.stat('.', () => setTimeout(() => console.log(fs.readdirSync('/proc/self/task').length), 50))
`

async function threadsWith (value) {
  const env = { ...process.env, UV_THREADPOOL_SIZE: value }
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', COUNT_THREADS], { env })
  return Number(stdout)
}

it('matches libuv: atoi() of UV_THREADPOOL_SIZE, 0 taken as 1, 4 when unset', async () => {
  const values = ['', 'abc', '0', '3', ' 5x', '+2', '6.9', undefined]
  const [one, ...counts] = await Promise.all(['1', ...values].map(threadsWith))
  const others = one - 1 // the threads that are not the pool's
  values.forEach((value, i) => {
    const reported = threadPool(value === undefined ? {} : { UV_THREADPOOL_SIZE: value })
    expect(reported.size + others, JSON.stringify(value)).toBe(counts[i])
    expect(reported.source).toBe(value === undefined ? 'default' : 'UV_THREADPOOL_SIZE')
  })
})

it('clamps to libuv\'s 1024, negative numbers included (libuv reads them as unsigned)', () => {
  expect(threadPool({ UV_THREADPOOL_SIZE: '5000' }).size).toBe(1024)
  expect(threadPool({ UV_THREADPOOL_SIZE: '-3' }).size).toBe(1024)
  expect(threadPool({ UV_THREADPOOL_SIZE: '1024' }).size).toBe(1024)
})
