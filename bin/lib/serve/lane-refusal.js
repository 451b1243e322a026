'use strict'

// Whether zcopy serve can put the native lane (lib/lane) in front of its
// server: with TLS or HTTP/2 it cannot, nor where the addon did not load or
// the cluster primary would hand connections out itself.

const { laneLoaded } = require('../../../lib/lane')

// → null when the lane can run with `config`, else why not (the line says it).
function laneRefusal (config) {
  if (!laneLoaded()) return 'the native addon is not loaded'
  if (config.tls !== null) return 'TLS and HTTP/2 stay on Node\'s stack'
  // Round-robin: the primary would accept every connection and pass it on.
  const policy = process.env.NODE_CLUSTER_SCHED_POLICY
  if (config.workers > 1 && policy && policy !== 'none') return `NODE_CLUSTER_SCHED_POLICY=${policy} hands connections out through Node's stack`
  return null
}

module.exports = { laneRefusal }
