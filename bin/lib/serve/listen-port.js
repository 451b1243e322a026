'use strict'

// Listening for zcopy serve: a port in use is a runtime failure (exit code 1),
// unless the user chose no port (no --port, no PORT, not in production): then
// it is said, and any free port is taken instead. An address that is not this
// machine's stays a usage error.

const { UsageError } = require('../../../tools/usage-error')
const { LISTEN_ERRORS } = require('../../../tools/listen')

function listenOnce (server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve(server.address())
    })
  })
}

function describe (err, port, host) {
  const reason = LISTEN_ERRORS[err.code]
  if (!reason) return err
  const message = reason({ port, host })
  const described = err.code === 'EADDRINUSE' || err.code === 'EACCES' ? new Error(message) : new UsageError(message)
  described.code = err.code
  return described
}

// → server.address(). `say` tells about the fallback.
async function listenPort (server, { port, fallback, host }, say) {
  try {
    return await listenOnce(server, port, host)
  } catch (err) {
    if (err.code !== 'EADDRINUSE' || !fallback) throw describe(err, port, host)
    say(`zcopy: port ${port} is in use; using a free port instead`)
    try {
      return await listenOnce(server, 0, host)
    } catch (again) {
      throw describe(again, 0, host)
    }
  }
}

module.exports = { listenPort, describeListenError: describe }
