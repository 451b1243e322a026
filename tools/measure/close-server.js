'use strict'

// Stops accepting, drops every open connection (and the given sockets), and
// resolves once the server is closed.
async function closeServer (server, sockets = []) {
  const closed = new Promise((resolve) => server.close(resolve))
  server.closeAllConnections?.()
  for (const socket of sockets) socket.destroy()
  await closed
}

module.exports = { closeServer }
