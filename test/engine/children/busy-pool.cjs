// Child process for busy-pool.test.mjs, run with UV_THREADPOOL_SIZE=4: the four
// pool threads are held by fs.open() calls on a FIFO that has no writer yet,
// then TRANSFERS transfers of a cached 1 MiB file start, each to a socket whose
// peer reads everything. Each sends its first 256 KiB from the event loop; what
// is left goes to the pool, where it waits for a thread, unless 8 jobs (twice
// the pool) already wait there: it is then sent from the event loop. Prints one
// JSON line: how many transfers completed while the pool was held, and what
// every peer received once it was let go. With the argument `hangup`, every
// peer destroys its connection once it has more than 256 KiB (what came from
// the event loop before the pool): the transfers sent from the event loop fail
// with the client's hang-up while the pool is held, the others complete once it
// is let go, and no descriptor is left open.
'use strict'

const crypto = require('node:crypto')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { once } = require('node:events')
const { pipeFile } = require('../../../lib')
const { socketPair } = require('./socket-pair.cjs')

const TRANSFERS = 16
const SIZE = 1024 * 1024
const POOL_THREADS = 4
const WAIT_MS = 20_000 // for the transfers that can finish while the pool is held
const HANGUP = process.argv[2] === 'hangup'
const HANGUP_AFTER = 256 * 1024

function drain (socket) {
  const hash = crypto.createHash('sha256')
  let bytes = 0
  socket.on('data', (chunk) => { bytes += chunk.length; hash.update(chunk) })
  return once(socket, 'end').then(() => ({ bytes, sha256: hash.digest('hex') }))
}

// Resolves once the peer has hung up, after more than HANGUP_AFTER bytes.
function hangUp (socket) {
  let bytes = 0
  socket.on('data', (chunk) => {
    bytes += chunk.length
    if (bytes > HANGUP_AFTER) socket.destroy()
  })
  return once(socket, 'close').then(() => 'hung up')
}

// Descriptors of sockets and of the test's files (Node opens others lazily).
function openDescriptors (dir) {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`)
      return target.startsWith('socket:') || target.startsWith(dir)
    } catch {
      return false // the directory's own descriptor, closed by now
    }
  }).length
}

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-busy-pool-'))
  const data = crypto.randomBytes(SIZE)
  const file = path.join(dir, 'file.bin')
  fs.writeFileSync(file, data)
  fs.readFileSync(file) // in the page cache
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const descriptors = openDescriptors(dir)
  const pairs = []
  for (let i = 0; i < TRANSFERS; i++) pairs.push(await socketPair())

  // Every pool thread waits in open() for the FIFO's writer.
  const held = Array.from({ length: POOL_THREADS }, () => fs.promises.open(fifo, 'r'))
  const fd = fs.openSync(file, 'r')
  let completed = 0
  let failed = 0
  const transfers = pairs.map(({ client, peer }) => {
    client.on('error', () => {}) // the peer's reset, in hangup mode
    const received = HANGUP ? hangUp(peer) : drain(peer)
    const done = pipeFile(fd, client).then((result) => {
      completed++
      client.end()
      return result.bytes
    }, (err) => {
      failed++
      client.destroy()
      return err.code
    })
    return { done, received }
  })

  const deadline = Date.now() + WAIT_MS
  while (completed + failed < TRANSFERS - 2 * POOL_THREADS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await new Promise((resolve) => setTimeout(resolve, 200)) // none more can finish
  const completedWhileHeld = completed
  const failedWhileHeld = failed

  const writer = fs.openSync(fifo, 'r+') // a writer: the opens return
  for (const handle of await Promise.all(held)) await handle.close()
  fs.closeSync(writer)
  const bytes = await Promise.all(transfers.map((t) => t.done))
  const received = await Promise.all(transfers.map((t) => t.received))
  fs.closeSync(fd)
  await Promise.all(pairs.flatMap(({ client, peer }) => [client, peer]).map((socket) => {
    const closed = socket.closed ? null : once(socket, 'close')
    socket.destroy()
    return closed
  }))
  const leftOpen = openDescriptors(dir) - descriptors
  fs.rmSync(dir, { recursive: true, force: true })
  process.stdout.write(JSON.stringify({
    completedWhileHeld,
    failedWhileHeld,
    leftOpen,
    bytes,
    received,
    expected: { bytes: SIZE, sha256: crypto.createHash('sha256').update(data).digest('hex') }
  }))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
