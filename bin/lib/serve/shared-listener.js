'use strict'

// --native-lane with --workers: the primary binds and listens once, through
// the addon (Lane.bind: a socket nothing in the primary polls or accepts
// from), and forks every worker, a replacement too, with that socket as one
// more descriptor; each worker's lane adopts it (lib/lane, instance.js). All the
// workers then accept from the one queue, as node:cluster's SCHED_NONE
// workers do from Node's listener (workers.js says why that beats
// round-robin and one SO_REUSEPORT socket per worker).

const cluster = require('node:cluster')
const engine = require('../../../lib/engine')
const { listenAddress } = require('../../../lib/lane')
const { listenPort } = require('./listen-port')

// Where a worker finds the socket: the slot after its IPC channel (fd 3).
const SLOT = 4
const SLOT_ENV = 'ZCOPY_LISTENING_FD'

// In the primary, before the first fork: → Promise of { address, env (for
// cluster.fork), close() } with listen-port.js's fallback and errors.
async function shareListener (config) {
  let fd = null
  const address = await listenPort(null, config, () => {}, (port, host) => listenAddress(host, (ip, ipv6) => {
    const bound = engine.Lane.bind(ip, port, ipv6)
    fd = bound.fd
    return bound.port
  }))
  cluster.setupPrimary({ stdio: ['inherit', 'inherit', 'inherit', 'ipc', fd] })
  return { address, env: { [SLOT_ENV]: String(SLOT) }, close: () => engine.closeFd(fd) }
}

// In a worker: the listening descriptor its primary shared, or null.
function inheritedListener () {
  const slot = process.env[SLOT_ENV]
  if (!cluster.isWorker || slot === undefined) return null
  delete process.env[SLOT_ENV] // not for the processes this one starts
  return Number(slot)
}

module.exports = { inheritedListener, shareListener }
