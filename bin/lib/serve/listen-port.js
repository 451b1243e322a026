'use strict'

// Listening for zcopy serve: a port in use is a runtime failure (exit code 1)
// whose line suggests -p 0, when the port was given with --port (or in
// production); otherwise (the default 8080, or $PORT) any free port is taken
// instead, and the line says which. An address that is not this machine's stays
// a usage error.

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
  let message = reason({ port, host })
  if (err.code === 'EADDRINUSE') message += '; choose another port, or -p 0 for any free one'
  const described = err.code === 'EADDRINUSE' || err.code === 'EACCES' ? new Error(message) : new UsageError(message)
  described.code = err.code
  return described
}

// The line that says a free port was taken for the one asked.
function portTakenLine (asked, used) {
  return `zcopy: port ${asked} is taken; using ${used} instead`
}

// → server.address(). `say` tells about the fallback. `listenOn(port, host)`
// → Promise of the address: by default the server's own listen; the native
// lane's (lib/lane) takes the listening socket instead.
async function listenPort (server, { port, fallback, host }, say, listenOn = (port, host) => listenOnce(server, port, host)) {
  try {
    return await listenOn(port, host)
  } catch (err) {
    if (err.code !== 'EADDRINUSE' || !fallback) throw describe(err, port, host)
  }
  let address
  try {
    address = await listenOn(0, host)
  } catch (again) {
    throw describe(again, 0, host)
  }
  say(portTakenLine(port, address.port))
  return address
}

module.exports = { listenPort, portTakenLine, describeListenError: describe }
