'use strict'
// pipeFile from a FIFO into a caller's descriptor (a pipe or a socket), aborted
// mid-way. Run as a child: an error that escapes the promise kills this process
// (no handler is installed), so the parent checks the exit code. Prints one JSON
// line: how the promise settled, and whether the caller's descriptors are still
// open and usable afterwards.
// argv: <zcopy lib/index.js> <source: fd | nonblock-fd | path> <destination: pipe | socket>

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { promisify } = require('node:util')

const [libPath, sourceKind, destKind] = process.argv.slice(2)
const { pipeFile } = require(libPath)
const { socketPair } = require('./socket-pair.cjs')
const open = promisify(fs.open)

async function fifo (dir, name) {
  const file = path.join(dir, name)
  execFileSync('mkfifo', [file])
  return file
}

// A pipe destination: → { fd (the caller's write end), drain(), close() }.
async function pipeDestination (dir) {
  const file = await fifo(dir, 'dest.fifo')
  const readFd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const fd = fs.openSync(file, 'w')
  const buffer = Buffer.alloc(1 << 16)
  let received = Buffer.alloc(0)
  const timer = setInterval(() => {
    for (;;) {
      let n = 0
      try { n = fs.readSync(readFd, buffer) } catch (err) { if (err.code === 'EAGAIN') return; throw err }
      if (n === 0) return
      received = Buffer.concat([received.subarray(-16), buffer.subarray(0, n)])
    }
  }, 2)
  return {
    fd,
    tail: () => received.toString('latin1'),
    close () { clearInterval(timer); fs.closeSync(fd); fs.closeSync(readFd) }
  }
}

async function socketDestination () {
  const { client, peer } = await socketPair()
  let received = Buffer.alloc(0)
  peer.on('data', (d) => { received = Buffer.concat([received.subarray(-16), d]) })
  return {
    fd: client._handle.fd,
    tail: () => received.toString('latin1'),
    close () { client.destroy(); peer.destroy() }
  }
}

function writeSomehow (fd, text) {
  for (let i = 0; i < 1000; i++) {
    try { return fs.writeSync(fd, text) } catch (err) { if (err.code !== 'EAGAIN') throw err }
  }
  throw new Error('destination stays full')
}

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-abort-fd-'))
  const sourcePath = await fifo(dir, 'source.fifo')
  const dest = destKind === 'socket' ? await socketDestination() : await pipeDestination(dir)

  // Source: a FIFO that a timer keeps feeding.
  let source
  let writerFd
  if (sourceKind === 'nonblock-fd') {
    source = fs.openSync(sourcePath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    writerFd = fs.openSync(sourcePath, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
  } else if (sourceKind === 'fd') {
    ;[source, writerFd] = await Promise.all([open(sourcePath, 'r'), open(sourcePath, 'w')])
  } else {
    source = sourcePath
    writerFd = open(sourcePath, 'w') // meets pipeFile's own open below
  }
  const chunk = Buffer.alloc(64 * 1024, 'z')
  // One write in flight at a time, off the main thread: a full FIFO must not
  // block the event loop that drains it.
  let writing = false
  const feeder = setInterval(() => {
    if (typeof writerFd !== 'number' || writing) return
    writing = true
    fs.write(writerFd, chunk, (err) => {
      writing = false
      // EPIPE: pipeFile closed the FIFO it opened (source 'path') as it aborted.
      if (err && err.code !== 'EAGAIN' && err.code !== 'EPIPE') throw err
    })
  }, 2)

  const controller = new AbortController()
  let progressed = 0
  let settledCount = 0
  let outcome
  const sending = pipeFile(source, dest.fd, {
    signal: controller.signal,
    onProgress (bytes) {
      progressed = bytes
      if (process.env.DEBUG_CHILD) process.stderr.write('progress ' + bytes + '\n')
      if (bytes >= 256 * 1024) controller.abort()
    }
  })
  if (typeof writerFd !== 'number') writerFd = await writerFd
  try {
    const result = await sending
    settledCount++
    outcome = { resolved: result }
  } catch (err) {
    settledCount++
    outcome = { code: err.code, name: err.name }
  }
  clearInterval(feeder)
  // The transfer reads no more: a write still in flight may wait on a full FIFO
  // for ever (a pool thread of this child, seen once under a CI run's load), so
  // a reader of our own drains it until that write is done.
  const drain = fs.openSync(sourcePath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const drained = Buffer.alloc(1 << 16)
  while (writing) {
    try {
      while (fs.readSync(drain, drained) > 0);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  fs.closeSync(drain)
  await new Promise((resolve) => setTimeout(resolve, 100))

  // The caller's descriptors are the caller's: still open, still usable.
  const destOpen = fs.fstatSync(dest.fd) !== undefined
  writeSomehow(dest.fd, 'AFTER')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const destUsable = dest.tail().endsWith('AFTER')
  const sourceOpen = typeof source !== 'number' || fs.fstatSync(source) !== undefined
  fs.closeSync(writerFd)
  if (typeof source === 'number') fs.closeSync(source)
  dest.close()
  fs.rmSync(dir, { recursive: true, force: true })
  process.stdout.write(JSON.stringify({ ...outcome, settledCount, progressed: progressed > 0, destOpen, destUsable, sourceOpen }) + '\n')
  // Nothing of the transfer may keep the process alive.
  setTimeout(() => {
    process.stdout.write(JSON.stringify({ lingering: process._getActiveHandles().map((h) => h.constructor.name) }) + '\n')
    process.exit(4)
  }, 2000).unref()
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ failed: String(err && err.stack) }) + '\n')
  process.exitCode = 3
})
