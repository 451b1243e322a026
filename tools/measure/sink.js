'use strict'

// The receiving end of the socket and http benchmarks, run as a child process
// (see sink-process.js) so that its CPU time is not counted as the sender's.
//
//   node sink.js socket PORT CONNECTIONS BLOCK_SIZE
//     Opens CONNECTIONS TCP connections to 127.0.0.1:PORT, reads into one
//     static buffer and discards, and writes one ack byte back on a
//     connection for every BLOCK_SIZE bytes it received there.
//   node sink.js http URL CONNECTIONS
//     For each IPC message { id }, GETs URL over a keep-alive pool of
//     CONNECTIONS sockets, discards the body and replies { id, status, bytes }.
//
// Both reply { type: 'ready' } when set up and, on { type: 'close' },
// { type: 'done', received } with the total body bytes received, then exit.
// They also exit when the parent goes away.

const http = require('node:http')
const net = require('node:net')

const READ_BUFFER = Buffer.allocUnsafe(1024 * 1024)
let received = 0

function socketSink (port, connections, blockSize) {
  const sockets = []
  let connected = 0
  for (let i = 0; i < connections; i++) {
    let pending = 0
    const socket = net.connect({
      host: '127.0.0.1',
      port,
      onread: {
        buffer: READ_BUFFER,
        callback (bytes) {
          received += bytes
          pending += bytes
          const acks = Math.floor(pending / blockSize)
          if (acks > 0) {
            pending -= acks * blockSize
            socket.write(Buffer.alloc(acks))
          }
        }
      }
    })
    socket.setNoDelay(true)
    socket.on('connect', () => {
      if (++connected === connections) process.send({ type: 'ready' })
    })
    socket.on('error', fail)
    sockets.push(socket)
  }
  return () => Promise.all(sockets.map((socket) => new Promise((resolve) => {
    if (socket.destroyed) return resolve()
    socket.once('close', resolve)
    socket.end()
  })))
}

function httpClient (url, connections) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  process.on('message', (message) => {
    if (message.id === undefined) return
    http.get(url, { agent }, (response) => {
      let bytes = 0
      response.on('data', (chunk) => { bytes += chunk.length })
      response.on('end', () => {
        received += bytes
        process.send({ id: message.id, status: response.statusCode, bytes })
      })
    }).on('error', fail)
  })
  process.send({ type: 'ready' })
  return async () => agent.destroy()
}

function fail (err) {
  process.send({ type: 'error', message: err.message }, () => process.exit(1))
}

const [mode, target, connections, blockSize] = process.argv.slice(2)
const close = mode === 'socket'
  ? socketSink(Number(target), Number(connections), Number(blockSize))
  : httpClient(target, Number(connections))

process.on('message', async (message) => {
  if (message.type !== 'close') return
  await close()
  process.send({ type: 'done', received }, () => process.disconnect())
})
process.on('disconnect', () => process.exit(0))
