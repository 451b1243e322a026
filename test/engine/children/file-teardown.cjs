// Child process for file-teardown.test.mjs: Workers terminated while a file to
// file copy is in flight (issue 15): the addon opens the paths in its first pool
// job, so a Worker may die with that job queued, opening, copying, or (a FIFO
// source with no writer) blocked in open(). A crash shows as this process's
// exit signal. Prints one JSON line: { leftOpen, workers, states }.
// ZCOPY_TEARDOWN_SCENARIOS: comma-separated names from SCENARIOS (default all).
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')

const SIZE = 256 * 1024 * 1024 // sparse: the copy reads holes, fast, but not done in a blink
const WORKERS = Number(process.env.ZCOPY_TEARDOWN_WORKERS || 30)
const AT_ONCE = 3
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const { fdTable, openedSince } = require('../../support/fd-table.cjs')

// In the Worker: start the copy, say so, and report its first progress.
//   path-path  pipeFile(path, path): both opened by the addon
//   path-fd    pipeFile(path, a descriptor the parent owns)
//   fd-path    pipeFile(a descriptor the parent owns, path)
//   fifo-path  pipeFile(a FIFO nobody writes to, path): the pool job waits in open()
function workerMain () {
  const { pipeFile } = require('../../../lib')
  const { kind, file, fifo, out, outFd, inFd } = workerData
  let reported = false
  const onProgress = () => {
    if (!reported) parentPort.postMessage({ type: 'progress' })
    reported = true
  }
  const source = kind === 'fd-path' ? inFd : kind === 'fifo-path' ? fifo : file
  const destination = kind === 'path-fd' ? outFd : out
  pipeFile(source, destination, { onProgress }).then(
    (result) => parentPort.postMessage({ type: 'done', bytes: result.bytes }),
    (err) => parentPort.postMessage({ type: 'error', code: err.code, message: err.message }))
  parentPort.postMessage({ type: 'started' })
}

// What each Worker does, and the moment it is terminated: 'started' (the pool job
// was just queued: it may not have run, be opening or be copying), 'progress'
// (its first chunk moved). The fifo one is unblocked by the parent opening the
// FIFO for writing once terminate() was called (unblockReader): the Worker's
// teardown waits for the pool job, which then closes what it opened.
const SCENARIOS = {
  'path-path@started': { kind: 'path-path', when: 'started' },
  'path-path@progress': { kind: 'path-path', when: 'progress' },
  'path-fd@started': { kind: 'path-fd', when: 'started' },
  'path-fd@progress': { kind: 'path-fd', when: 'progress' },
  'fd-path@started': { kind: 'fd-path', when: 'started' },
  'fd-path@progress': { kind: 'fd-path', when: 'progress' },
  'fifo-path@started': { kind: 'fifo-path', when: 'started' }
}

// Opens the FIFO for writing, without blocking, until `terminating` settles: a
// pool job waiting in open() for a writer then returns (ENXIO: no reader yet,
// or none ever, when the job was cancelled before it ran).
async function unblockReader (fifo, terminating) {
  let terminated = false
  terminating.then(() => { terminated = true }, () => { terminated = true })
  while (!terminated) {
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
    } catch (err) {
      if (err.code !== 'ENXIO') throw err
    }
    await sleep(5)
  }
}

async function runWorker (index, setup, names, states) {
  const name = names[index % names.length]
  const { kind, when } = SCENARIOS[name]
  const out = path.join(setup.dir, `out-${index}.bin`)
  const data = { kind, file: setup.file, fifo: setup.fifo, out }
  const owned = [] // the parent's descriptors, closed after the Worker is gone
  if (kind === 'path-fd') {
    data.outFd = fs.openSync(out, 'w')
    owned.push(() => fs.closeSync(data.outFd))
  } else if (kind === 'fd-path') {
    data.inFd = fs.openSync(setup.file, 'r')
    owned.push(() => fs.closeSync(data.inFd))
  }
  const worker = new Worker(__filename, { workerData: data })
  const outcome = await new Promise((resolve, reject) => {
    worker.on('message', (message) => {
      if (message.type === 'done' || message.type === 'error') resolve(message.type)
      else if (message.type === when) resolve(`terminated after ${when}`)
    })
    worker.on('error', reject)
    worker.on('exit', () => resolve('exited'))
  })
  const terminating = worker.terminate()
  if (kind === 'fifo-path') await unblockReader(setup.fifo, terminating)
  await terminating
  for (const close of owned) close()
  const key = `${name}: ${outcome}`
  states[key] = (states[key] || 0) + 1
  fs.rmSync(out, { force: true })
}

async function main () {
  // The test passes a directory it removes itself, even after a crash.
  const dir = process.env.ZCOPY_TEARDOWN_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-teardown-'))
  const file = path.join(dir, 'sparse.bin')
  const fd = fs.openSync(file, 'w')
  fs.ftruncateSync(fd, SIZE)
  fs.closeSync(fd)
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const names = (process.env.ZCOPY_TEARDOWN_SCENARIOS || Object.keys(SCENARIOS).join(',')).split(',')
  const setup = { dir, file, fifo }
  const states = {}

  // One Worker first, so that what Node sets up once for Workers is counted in both.
  await runWorker(1, setup, names, {})
  await sleep(100)
  const fdsBefore = fdTable()

  for (let i = 0; i < WORKERS; i += AT_ONCE) {
    const batch = []
    for (let j = i; j < Math.min(WORKERS, i + AT_ONCE); j++) batch.push(runWorker(j, setup, names, states))
    await Promise.all(batch)
  }
  await sleep(200)
  const leftOpen = openedSince(fdsBefore)
  if (!process.env.ZCOPY_TEARDOWN_DIR) fs.rmSync(dir, { recursive: true, force: true })
  process.stdout.write(JSON.stringify({ leftOpen, workers: WORKERS, states }))
}

if (isMainThread) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  })
} else {
  workerMain()
}
