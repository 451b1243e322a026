// Child process for open-beneath.test.mjs: Workers terminated while their
// openBeneath() calls are queued behind a busy thread pool (UV_THREADPOOL_SIZE=1,
// its one thread held by a read of an empty FIFO until this process writes to
// it, after terminate()). Node completes those jobs after the Worker's JS is
// gone; the descriptors they opened must be closed by the addon. (A pbkdf2
// calibrated to 800 ms held the pool before: a Worker that took longer to
// start on a loaded machine found it free.)
// Prints one JSON line: { leftOpen, workers, queuedBehindBusyPool }.
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')

const WORKERS = 4
const OPENS = 32
const { fdTable, openedSince } = require('../../support/fd-table.cjs')

// A read of the empty FIFO `fifo` on the pool's only thread: it holds the
// thread until release() writes a byte. `state.busy` is true until it ends.
function busyPool (fifo) {
  execFileSync('mkfifo', [fifo])
  const fd = fs.openSync(fifo, fs.constants.O_RDWR) // (no wait for a writer)
  const state = { busy: true, release: () => fs.writeSync(fd, 'x') }
  state.done = new Promise((resolve, reject) => {
    fs.read(fd, Buffer.alloc(1), 0, 1, null, (err) => {
      state.busy = false
      fs.closeSync(fd)
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
  // A first Worker (taking no descriptor), so that what Node sets up once for
  // Workers is counted in both figures.
  const warmUp = new Worker('', { eval: true })
  await new Promise((resolve) => warmUp.once('exit', resolve))
  const fdsBefore = fdTable()
  let queuedBehindBusyPool = 0
  for (let i = 0; i < WORKERS; i++) {
    const pool = busyPool(path.join(dir, `fifo-${i}`))
    // trackUnmanagedFds: false, the descriptors come from the addon, not fs.open
    const worker = new Worker(__filename, { workerData: { dirFd }, trackUnmanagedFds: false })
    await new Promise((resolve) => worker.once('message', resolve)) // its opens are queued
    if (pool.busy) queuedBehindBusyPool++
    // Its teardown waits for its jobs, which wait for the pool: the pool is
    // let go once the Worker's JS had time to stop.
    const terminated = worker.terminate()
    await new Promise((resolve) => setTimeout(resolve, 100))
    pool.release()
    await Promise.all([terminated, pool.done])
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
