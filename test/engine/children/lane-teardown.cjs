'use strict'

// Workers that own a native lane (a listener and connections in the middle of
// a head, or with a request lent to JavaScript that never answers) are terminated: the lane's per-environment cleanup closes every
// descriptor and handle, and never calls into the dead environment. Prints
// { workers, leaked (descriptors), clientsClosed }.

const fs = require('node:fs')
const net = require('node:net')
const { once } = require('node:events')
const { Worker, isMainThread, parentPort } = require('node:worker_threads')

const WORKERS = 10

if (!isMainThread) {
  const { Lane } = require('../../../lib/engine')
  const lane = new Lane(() => {}, {
    keepAliveMs: 5000,
    keepAliveLine: '',
    idleMs: 60000,
    headTimeoutMs: 60000,
    onLog: () => {},
    onLend: () => {}, // the lent request is never answered
    onBody: () => {},
    onWritten: () => {},
    onGone: () => {}
  })
  parentPort.postMessage(lane.listen('127.0.0.1', 0, false))
  setInterval(() => {}, 1000) // stays alive until terminated
} else {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}

function fds () {
  const out = new Map()
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      out.set(fd, fs.readlinkSync(`/proc/self/fd/${fd}`))
    } catch {} // the readdir's own descriptor
  }
  return out
}

async function main () {
  // What Node opens for its first Worker (/dev/null) is not the lane's.
  await new Worker('', { eval: true }).terminate()
  const before = fds()
  let clientsClosed = 0
  for (let i = 0; i < WORKERS; i++) {
    const worker = new Worker(__filename)
    const [port] = await once(worker, 'message')
    const clients = []
    for (const head of ['', 'GET /partial HTTP/1.1\r\nHo', 'GET /lent HTTP/1.1\r\nHost: x\r\n\r\n']) {
      const socket = net.connect(port, '127.0.0.1')
      socket.on('error', () => {})
      await once(socket, 'connect')
      if (head !== '') socket.write(head)
      clients.push(socket)
    }
    await new Promise((resolve) => setTimeout(resolve, 50)) // accepted and read by the lane
    await worker.terminate()
    await Promise.all(clients.map((socket) => socket.closed ? null : once(socket, 'close')))
    clientsClosed += clients.length
  }
  const after = fds()
  const leaked = [...after].filter(([fd, target]) => before.get(fd) !== target).map(([fd, target]) => `${fd} → ${target}`)
  console.log(JSON.stringify({ workers: WORKERS, leaked, clientsClosed }))
}
