// Child process for socket-wait.test.mjs (run with UV_THREADPOOL_SIZE=1): one
// transfer to a reader that reads for 5 ms every 400 ms, while fs.stat runs
// back to back on the one pool thread; then the reader reads everything. The
// same stat loop runs first with no transfer, a control under the same load.
// Prints one JSON line.
'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pipeFile } = require('../../../lib')
const { socketPair } = require('./socket-pair.cjs')

const SIZE = 64 * 1024 * 1024
const SLOW_MS = 2500
// A stat this slow waited for something: the transfer (when it holds the pool
// thread) or, on a loaded machine, the scheduler.
const STUCK_MS = 50
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// fs.stat back to back for SLOW_MS. → the time of each stat, in ms.
async function statFor (file) {
  const statMs = []
  const until = performance.now() + SLOW_MS
  while (performance.now() < until) {
    const start = performance.now()
    await fs.promises.stat(file)
    statMs.push(performance.now() - start)
  }
  return statMs
}

// The time stats spent stuck: those that waited for something.
const stuck = (statMs) => statMs.filter((ms) => ms >= STUCK_MS).reduce((sum, ms) => sum + ms, 0)

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-slow-reader-'))
  try {
    const file = path.join(dir, 'big.bin')
    const data = crypto.randomBytes(SIZE)
    fs.writeFileSync(file, data)
    const { client, peer } = await socketPair()

    const hash = crypto.createHash('sha256')
    let received = 0
    peer.on('data', (chunk) => { received += chunk.length; hash.update(chunk) })
    const ended = new Promise((resolve) => peer.on('end', resolve))
    peer.pause()
    const control = await statFor(file)
    const done = pipeFile(file, client).then((result) => result.bytes)

    // The slow phase: bursts of reading, and fs.stat back to back meanwhile.
    let slow = true
    let bursts = 0
    const reader = (async () => {
      while (slow) {
        await sleep(400)
        if (!slow) break
        peer.resume()
        await sleep(5)
        peer.pause()
        bursts++
      }
    })()
    const statMs = await statFor(file)
    slow = false
    await reader
    const receivedWhileSlow = received

    peer.resume()
    const bytes = await done
    client.end()
    await ended
    process.stdout.write(JSON.stringify({
      size: SIZE,
      sha256: crypto.createHash('sha256').update(data).digest('hex'),
      bursts,
      receivedWhileSlow,
      statCount: statMs.length,
      statMaxMs: statMs.reduce((max, ms) => Math.max(max, ms), 0),
      slowMs: SLOW_MS,
      stuckMs: stuck(statMs),
      controlStuckMs: stuck(control),
      bytes,
      received: { bytes: received, sha256: hash.digest('hex') }
    }))
    peer.destroy()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
