'use strict'

// One serving process: the app, its server, its access log, its drain.

const { createApp } = require('./app')
const { watchCrowds } = require('./crowd-memory')
const { createRequestLog, useColour } = require('./request-log')
const { createServer } = require('./server')
const { trackConnections } = require('./shutdown')

function createInstance ({ zcopy, root, config, write }) {
  const log = createRequestLog(write, {
    format: config.quiet ? 'none' : config.log,
    colour: config.log === 'text' && useColour()
  })
  const app = createApp(zcopy, root, config, log.logRequest, log.onSent)
  const server = createServer(config, app.handle, zcopy.protectServer)
  const drain = trackConnections(server)
  watchCrowds(server)
  return {
    server,
    // What stop() waits for, once it has begun (see shutdown.js).
    waitingFor: () => drain.waitingFor(),
    async stop () {
      log.stopping()
      await drain(config.shutdownTimeout * 1000)
      await log.flush() // the lines of the responses the drain cut
      await app.close() // also removes the compressed variants' folder
    }
  }
}

// Resolves on the first SIGINT or SIGTERM (or `also`, e.g. a message from the
// cluster primary).
function stopSignal (also = () => {}) {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
    also(resolve)
  })
}

module.exports = { createInstance, stopSignal }
