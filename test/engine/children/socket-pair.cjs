// A loopback TCP client and the server side of its connection, for child processes.
'use strict'

const net = require('node:net')
const { once } = require('node:events')

async function socketPair () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const accepted = once(server, 'connection')
  const client = net.connect(server.address().port, '127.0.0.1')
  await once(client, 'connect')
  const [peer] = await accepted
  server.close()
  return { client, peer }
}

module.exports = { socketPair }
