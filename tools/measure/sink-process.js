'use strict'

const { fork } = require('node:child_process')
const path = require('node:path')

const SINK = path.join(__dirname, 'sink.js')

// Starts sink.js as a child process with `args` and waits until it is ready.
// Returns { request(message), close() }:
//   request(message) sends an IPC message carrying a fresh `id` and resolves
//     with the child's reply to it;
//   close() asks the child to finish and resolves with the total bytes it
//     received.
// Any error the child reports, or its early exit, rejects what is pending.
async function startSink (args) {
  const child = fork(SINK, args.map(String), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const waiting = new Map()
  let nextId = 0
  let failure = null

  function settleAll (err) {
    failure = failure || err
    for (const { reject } of waiting.values()) reject(failure)
    waiting.clear()
  }

  child.on('message', (message) => {
    if (message.type === 'error') return settleAll(new Error(`benchmark sink: ${message.message}`))
    const key = message.id ?? message.type
    const entry = waiting.get(key)
    if (!entry) return
    waiting.delete(key)
    entry.resolve(message)
  })
  child.on('exit', (code) => settleAll(new Error(`benchmark sink exited early (code ${code})`)))

  function expect (key) {
    if (failure) return Promise.reject(failure)
    return new Promise((resolve, reject) => waiting.set(key, { resolve, reject }))
  }

  await expect('ready')
  return {
    request (message) {
      const id = nextId++
      const reply = expect(id)
      child.send({ ...message, id })
      return reply
    },
    async close () {
      const done = expect('done')
      child.send({ type: 'close' })
      const { received } = await done
      await new Promise((resolve) => child.exitCode === null ? child.once('exit', resolve) : resolve())
      return received
    }
  }
}

// Throws unless the sink received exactly the bytes of every op that
// measure() counted, warmup included.
function checkReceived (received, { operations, warmupOperations }, size) {
  const sent = (operations + warmupOperations) * size
  if (received !== sent) throw new Error(`the sink received ${received} bytes, expected ${sent}`)
}

module.exports = { startSink, checkReceived }
