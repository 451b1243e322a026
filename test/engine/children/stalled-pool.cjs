// Child process for pool.test.mjs: 8 transfers stalled on paused receivers with a
// 4-thread pool, then a readFile and a CPU sample. Prints one JSON line.
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { once } = require('node:events')
const { pipeFile } = require('../../../lib')
const { socketPair } = require('./socket-pair.cjs')

const STALLED = 8
const SIZE = 64 * 1024 * 1024
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-pool-'))
  const big = path.join(dir, 'big.bin')
  const small = path.join(dir, 'small.txt')
  fs.writeFileSync(big, Buffer.alloc(SIZE, 7))
  fs.writeFileSync(small, 'small file')

  const transfers = []
  for (let i = 0; i < STALLED; i++) {
    const { client, peer } = await socketPair()
    peer.pause()
    const state = { client, peer, progress: 0, settled: false, received: 0 }
    state.done = pipeFile(big, client, { onProgress: (n) => { state.progress = n } })
      .finally(() => { state.settled = true })
    transfers.push(state)
  }
  // Stalled: no transfer has moved a byte for 300 ms.
  let last = ''
  for (;;) {
    await sleep(300)
    const now = transfers.map((t) => t.progress).join()
    if (now === last) break
    last = now
  }

  const cpuBefore = process.cpuUsage()
  await sleep(1000)
  const cpu = process.cpuUsage(cpuBefore)

  const readFileMs = []
  for (let i = 0; i < 3; i++) {
    const start = process.hrtime.bigint()
    await fs.promises.readFile(small)
    readFileMs.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  const stillStalled = transfers.filter((t) => !t.settled).length

  for (const t of transfers) {
    t.peer.on('data', (chunk) => { t.received += chunk.length })
    t.peer.resume()
  }
  const bytes = await Promise.all(transfers.map((t) => t.done.then((r) => r.bytes)))
  for (const t of transfers) t.client.end()
  await Promise.all(transfers.map((t) => once(t.peer, 'end')))

  process.stdout.write(JSON.stringify({
    stillStalled,
    readFileMs,
    cpuMsWhileStalled: (cpu.user + cpu.system) / 1000,
    bytes,
    received: transfers.map((t) => t.received),
    size: SIZE
  }))
  fs.rmSync(dir, { recursive: true, force: true })
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
