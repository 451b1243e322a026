// Child process for worker-teardown.test.mjs: Workers terminated while they call
// into the addon in a tight loop. Once a Worker is told to stop, Node-API calls
// from it fail; node-addon-api then throws, and throwing fails too: without
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS (binding.gyp) that is a FATAL ERROR
// (SIGABRT) for the whole process, on every Node line. Prints one JSON line.
'use strict'

const fs = require('node:fs')
const { Worker, isMainThread, parentPort } = require('node:worker_threads')

const WORKERS = Number(process.env.ZCOPY_BUSY_WORKERS || 60)

async function main () {
  for (let i = 0; i < WORKERS; i++) {
    const worker = new Worker(__filename)
    await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject) })
    await new Promise((resolve) => setTimeout(resolve, i % 5))
    await worker.terminate()
  }
  process.stdout.write(JSON.stringify({ workers: WORKERS }))
}

function workerMain () {
  const { native } = require('../../../lib/engine/binding')
  const inFd = fs.openSync(__filename, 'r')
  const outFd = fs.openSync('/dev/null', 'w')
  const transfer = new native.Transfer({ outFd, inFd, offset: 0, length: 1, chunkSize: 65536 })
  parentPort.postMessage('calling')
  for (;;) {
    transfer.settled()
    transfer.headWritten()
  }
}

if (isMainThread) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  })
} else {
  workerMain()
}
