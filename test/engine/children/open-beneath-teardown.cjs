// Child process for open-beneath.test.mjs: Workers terminated while their
// openBeneath() calls are queued behind a busy thread pool (UV_THREADPOOL_SIZE=1,
// its one thread held by a long pbkdf2). Node completes those jobs after the
// Worker's JS is gone; the descriptors they opened must be closed by the addon.
// Prints one JSON line: { leftOpen, workers, queuedBehindBusyPool }.
'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')

const WORKERS = 4
const OPENS = 32
const { fdTable, openedSince } = require('../../support/fd-table.cjs')

// Iterations of pbkdf2-sha256 that take about `ms` on this machine.
function calibrate (ms) {
  crypto.pbkdf2Sync('x', 'y', 20000, 32, 'sha256') // warm-up
  const start = process.hrtime.bigint()
  crypto.pbkdf2Sync('x', 'y', 20000, 32, 'sha256')
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6
  return Math.ceil(20000 * ms / Math.max(elapsed, 0.1))
}

// One pbkdf2 job on the pool's only thread; `state.busy` is true until it ends.
function busyPool (iterations) {
  const state = { busy: true }
  state.done = new Promise((resolve, reject) => {
    crypto.pbkdf2('x', 'y', iterations, 32, 'sha256', (err) => {
      state.busy = false
      if (err) reject(err)
      else resolve()
    })
  })
  return state
}

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-openb-'))
  fs.writeFileSync(path.join(dir, 'file.txt'), 'inside')
  const dirFd = fs.openSync(dir, 'r')
  const iterations = calibrate(800)
  // A first Worker (taking no descriptor), so that what Node sets up once for
  // Workers is counted in both figures.
  const warmUp = new Worker('', { eval: true })
  await new Promise((resolve) => warmUp.once('exit', resolve))
  const fdsBefore = fdTable()
  let queuedBehindBusyPool = 0
  for (let i = 0; i < WORKERS; i++) {
    const pool = busyPool(iterations)
    // trackUnmanagedFds: false, the descriptors come from the addon, not fs.open
    const worker = new Worker(__filename, { workerData: { dirFd }, trackUnmanagedFds: false })
    await new Promise((resolve) => worker.once('message', resolve)) // its opens are queued
    if (pool.busy) queuedBehindBusyPool++
    await worker.terminate()
    await pool.done
  }
  // The completions of the terminated Workers' jobs have run by now (Node waits
  // for them before a Worker's teardown ends); give the pool a moment anyway.
  await new Promise((resolve) => setTimeout(resolve, 100))
  const leftOpen = openedSince(fdsBefore)
  fs.closeSync(dirFd)
  fs.rmSync(dir, { recursive: true, force: true })
  process.stdout.write(JSON.stringify({ leftOpen, workers: WORKERS, queuedBehindBusyPool }))
}

if (isMainThread) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  })
} else {
  const { native } = require('../../../lib/engine/binding')
  for (let i = 0; i < OPENS; i++) native.openBeneath(workerData.dirFd, 'file.txt').then(({ fd }) => fs.closeSync(fd), () => {})
  parentPort.postMessage('queued')
}
