'use strict'

// → a TCP port of 127.0.0.1 that nothing listens on now (for nginx, which is
// told its port rather than reporting one).

const net = require('node:net')
const { once } = require('node:events')

async function freePort () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

module.exports = { freePort }
