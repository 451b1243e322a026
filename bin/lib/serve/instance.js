'use strict'

// One serving process: the app, its server, its access log, its drain.

const { createApp } = require('./app')
const { watchCrowds } = require('./crowd-memory')
const { listenPort } = require('./listen-port')
const { createRequestLog, useColour } = require('./request-log')
const { createServer } = require('./server')
const { inheritedListener } = require('./shared-listener')
const { trackConnections } = require('./shutdown')

// How long a stop waits, after the drain, for the app to close its descriptors
// and remove the compressed variants' folder. A compression under way holds
// its source's descriptor until it ends (seconds for a large file, far more on
// a CPU the requests keep busy), and its result is not wanted: the process
// exits without it, and its 'exit' listeners remove the folder and kill the
// compression processes (lib/http/compress/cache-dir.js, background.js).
const CLOSE_MS = 1000

function createInstance ({ zcopy, root, config, write }) {
  const log = createRequestLog(write, {
    format: config.quiet ? 'none' : config.log,
    colour: config.log === 'text' && useColour()
  })
  // config.nativeLane: checked by the command (lane-refusal.js). The lane
  // (zcopy.nativeLane) is made once the server is; serveStatic's offers go to it.
  // With --cors an answer depends on Origin too: nothing is replayed.
  let lane = null
  const app = createApp(zcopy, root, config, {
    onRequest: log.logRequest,
    onSent: log.onSent,
    onReplayable: !config.nativeLane || config.cors ? null : (req, res, replay) => lane.offer(req, res, replay)
  })
  const server = createServer(config, app.handle, zcopy.protectServer)
  if (config.nativeLane) lane = zcopy.nativeLane(server, log.logLaneAnswer === null ? {} : { onAnswer: log.logLaneAnswer })
  const drain = trackConnections(server)
  watchCrowds(server, lane === null ? null : () => lane.connections())
  return {
    server,
    // → Promise of the address listened on (listen-port.js): by the server, or
    // by the native lane, which then hands Node the connections it does not answer.
    listen: (say) => lane === null ? listenPort(server, config, say) : listenPort(server, config, say, laneListen(lane)),
    // With compression: the promise of where its variants go (app.js).
    variantsFolder: app.variantsFolder,
    // What stop() waits for, once it has begun (see shutdown.js): the lane's
    // answers in flight are responses too.
    waitingFor: () => {
      const waiting = drain.waitingFor()
      return lane === null ? waiting : { ...waiting, responses: waiting.responses + lane.answersInFlight() }
    },
    async stop () {
      log.stopping()
      const timeoutMs = config.shutdownTimeout * 1000
      await Promise.all([drain(timeoutMs), lane === null ? null : lane.close(timeoutMs)])
      await log.flush() // the lines of the responses the drain cut
      await within(app.close(), CLOSE_MS) // also removes the compressed variants' folder
    }
  }
}

// How the lane listens: a --workers worker accepts from the socket its
// primary listens on (shared-listener.js).
function laneListen (lane) {
  const shared = inheritedListener()
  return (port, host) => shared === null ? lane.listen(port, host) : lane.listen({ fd: shared, host })
}

// → Promise settled as `promise` is, or resolved after `ms`, whichever is first.
function within (promise, ms) {
  let timer
  const late = new Promise((resolve) => { timer = setTimeout(resolve, ms) })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
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
