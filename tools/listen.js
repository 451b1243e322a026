'use strict'

const { UsageError } = require('./usage-error')

const REASONS = {
  EADDRINUSE: ({ port, host }) => `port ${port} is already in use on ${host}`,
  EACCES: ({ port }) => `not allowed to listen on port ${port} (ports below 1024 need privileges)`,
  EADDRNOTAVAIL: ({ host }) => `cannot listen on ${host}: not an address of this machine`,
  ENOTFOUND: ({ host }) => `cannot listen on ${host}: unknown host`
}

// Starts `server` on host:port; resolves with server.address(). The failures
// caused by what the user asked for (a port in use, a foreign host) reject
// with a UsageError.
function listen (server, port, host) {
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      const reason = REASONS[err.code]
      reject(reason ? new UsageError(reason({ port, host })) : err)
    }
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      resolve(server.address())
    })
  })
}

module.exports = { listen, LISTEN_ERRORS: REASONS }
