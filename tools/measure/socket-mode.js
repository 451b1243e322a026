'use strict'

const fs = require('node:fs')
const net = require('node:net')
const { measure } = require('./measure')
const { startSink, checkReceived } = require('./sink-process')
const { listen } = require('../listen')
const { closeServer } = require('./close-server')

// --mode socket: a page-cached file to a loopback TCP sink (sink.js in a child
// process), over `concurrency` persistent connections. One op sends the whole
// file on one connection and ends when the sink acknowledges its last byte.
//
// A sender is { open({ file, sockets }) → { send(slot) → Promise<bytes>,
// probe?, close?() } }; bench/engine.js adds its own (the C sendfile loop).

const senders = {
  zcopy: {
    open: ({ file, sockets, zcopy }) => ({
      send: async (slot) => (await zcopy.pipeFile(file, sockets[slot])).bytes
    })
  },
  // How Node sends a file today: fs.createReadStream(file).pipe(socket) with
  // default options (64 KiB chunks); { end: false } keeps the connection.
  stream: {
    open: ({ file, sockets }) => ({
      send: (slot) => new Promise((resolve, reject) => {
        const source = fs.createReadStream(file)
        source.on('error', reject)
        source.on('end', () => resolve(source.bytesRead))
        source.pipe(sockets[slot], { end: false })
      })
    })
  }
}

// Resolves once per ack byte the sink sends back on `socket`, in order.
function ackCounter (socket) {
  const waiting = []
  socket.on('data', (chunk) => {
    for (let i = 0; i < chunk.length && waiting.length > 0; i++) waiting.shift().resolve()
  })
  socket.on('close', () => {
    for (const { reject } of waiting.splice(0)) reject(new Error('the sink closed the connection'))
  })
  return () => new Promise((resolve, reject) => waiting.push({ resolve, reject }))
}

function acceptConnections (server, count) {
  const sockets = []
  return new Promise((resolve) => server.on('connection', (socket) => {
    socket.setNoDelay(true)
    if (sockets.push(socket) === count) resolve(sockets)
  }))
}

async function runSocketMode ({ file, size, concurrency, duration, iterations, sender, zcopy }) {
  const server = net.createServer()
  const { port } = await listen(server, 0, '127.0.0.1')
  const accepted = acceptConnections(server, concurrency)
  let sink = null
  let sockets = []
  let opened = null
  let result = null
  try {
    sink = await startSink(['socket', port, concurrency, size])
    sockets = await accepted
    const nextAck = sockets.map(ackCounter)
    opened = await sender.open({ file, sockets, zcopy })
    result = await measure({
      size,
      concurrency,
      duration,
      iterations,
      probe: opened.probe,
      op: async (slot) => {
        const acked = nextAck[slot]()
        const bytes = await opened.send(slot)
        await acked
        return bytes
      }
    })
  } finally {
    if (opened && opened.close) await opened.close()
    const received = sink && await sink.close()
    await closeServer(server, sockets)
    if (result) checkReceived(received, result, size)
  }
  return result
}

module.exports = { runSocketMode, senders }
