// Child process for worker-teardown.test.mjs: Workers terminated while one of
// their transfers is in flight (to a socket whose peer never reads, and to a
// file), 50 of them, a few at a time. A crash shows as this process's exit
// signal. Prints one JSON line: { leftOpen, workers, states }.
// ZCOPY_TEARDOWN_PEERS=read: the peers read as fast as they can instead, from a
// bigger (sparse) file, so that the socket transfers are terminated while a pool
// job sends or waits in the pool for the reader to take more.
'use strict'

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { once } = require('node:events')
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')

const READING = process.env.ZCOPY_TEARDOWN_PEERS === 'read'
const SIZE = (READING ? 1024 : 64) * 1024 * 1024
const WORKERS = Number(process.env.ZCOPY_TEARDOWN_WORKERS || 50)
const AT_ONCE = 3
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const { fdTable, openedSince } = require('../../support/fd-table.cjs')

// In the Worker: start one transfer, report its progress to the parent, and
// say when it stalls (the destination is full: the transfer waits on the loop).
//   pipe-socket  pipeFile(path, a socket of this Worker) to a peer that never reads
//   pipe-file    pipeFile(path, path)
//   raw-socket   sendfile() between descriptors the parent owns (its socket, its file)
//   raw-file     idem, to a file the parent opened
async function workerMain () {
  const { pipeFile, sendfile } = require('../../../lib')
  const { kind, file, port, out, outFd, inFd } = workerData
  let bytes = 0
  let last = -1
  const onProgress = (n) => {
    if (bytes === 0) parentPort.postMessage({ type: 'progress', bytes: n })
    bytes = n
  }
  let done
  if (kind === 'pipe-socket') {
    const socket = net.connect(port, '127.0.0.1')
    socket.on('error', () => {})
    await once(socket, 'connect')
    done = pipeFile(file, socket, { onProgress }).then((result) => result.bytes)
  } else if (kind === 'pipe-file') {
    done = pipeFile(file, out, { onProgress }).then((result) => result.bytes)
  } else {
    done = sendfile(outFd, inFd, 0, SIZE, { onProgress })
  }
  done.then(
    (n) => parentPort.postMessage({ type: 'done', bytes: n }),
    (err) => parentPort.postMessage({ type: 'error', code: err.code, message: err.message }))
  parentPort.postMessage({ type: 'started' })
  for (;;) {
    await sleep(50)
    if (bytes > 0 && bytes === last) {
      parentPort.postMessage({ type: 'stalled', bytes })
      return
    }
    last = bytes
  }
}

// What each Worker does, and the moment it is terminated: 'started' (the transfer
// was just queued for the pool), 'progress' (its first chunk moved), 'stalled'
// (it is waiting for the socket to take more). The pipe- kinds are not
// terminated at 'started': their source open (fs.promises.open) may still be in
// flight then, and Node itself leaks a descriptor opened for a terminated Worker.
const STALLED_SCENARIOS = [
  { kind: 'pipe-socket', when: 'progress' },
  { kind: 'pipe-file', when: 'progress' },
  { kind: 'pipe-socket', when: 'stalled' },
  { kind: 'raw-socket', when: 'started' },
  { kind: 'raw-file', when: 'started' },
  { kind: 'raw-socket', when: 'stalled' },
  { kind: 'raw-file', when: 'progress' }
]
// With reading peers nothing stalls; a socket transfer is terminated at its
// first progress (a pool job has sent and the next one is running) or at once.
const READING_SCENARIOS = [
  { kind: 'pipe-socket', when: 'progress' },
  { kind: 'raw-socket', when: 'progress' },
  { kind: 'raw-socket', when: 'started' }
]
const SCENARIOS = READING ? READING_SCENARIOS : STALLED_SCENARIOS

async function runWorker (index, setup, states) {
  const { kind, when } = SCENARIOS[index % SCENARIOS.length]
  const out = path.join(setup.dir, `out-${index}.bin`)
  const data = { kind, file: setup.file, port: setup.port, out }
  const owned = [] // the parent's descriptors, closed after the Worker is gone
  if (kind === 'raw-socket') {
    const socket = net.connect(setup.port, '127.0.0.1')
    await once(socket, 'connect')
    owned.push(() => socket.destroy())
    data.outFd = socket._handle.fd
  } else if (kind === 'raw-file') {
    data.outFd = fs.openSync(out, 'w')
    owned.push(() => fs.closeSync(data.outFd))
  }
  if (kind.startsWith('raw')) {
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
  await worker.terminate()
  for (const close of owned) close()
  const key = `${kind}: ${outcome}`
  states[key] = (states[key] || 0) + 1
  fs.rmSync(out, { force: true })
}

async function main () {
  // The test passes a directory it removes itself, even after a crash.
  const dir = process.env.ZCOPY_TEARDOWN_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-teardown-'))
  const file = path.join(dir, 'big.bin')
  if (READING) {
    fs.closeSync(fs.openSync(file, 'w'))
    fs.truncateSync(file, SIZE) // a hole reads as zeros, quickly; pages come into the cache as read
  } else {
    fs.writeFileSync(file, Buffer.alloc(SIZE, 7))
  }
  // Peers that never read: the sender fills the socket buffers, then waits.
  // (Or read and drop everything, with ZCOPY_TEARDOWN_PEERS=read.)
  const peers = new Set()
  const server = net.createServer((socket) => {
    if (READING) socket.resume()
    else socket.pause()
    socket.on('error', () => {})
    peers.add(socket)
    socket.on('close', () => peers.delete(socket))
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const setup = { dir, file, port: server.address().port }
  const states = {}

  // One Worker first, so that what Node sets up once for Workers is counted in both.
  await runWorker(0, setup, {})
  for (const peer of peers) peer.destroy()
  await sleep(100)
  const fdsBefore = fdTable()

  for (let i = 0; i < WORKERS; i += AT_ONCE) {
    const batch = []
    for (let j = i; j < Math.min(WORKERS, i + AT_ONCE); j++) batch.push(runWorker(j, setup, states))
    await Promise.all(batch)
    for (const peer of peers) peer.destroy()
  }
  await sleep(200)
  const leftOpen = openedSince(fdsBefore)
  server.close()
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
