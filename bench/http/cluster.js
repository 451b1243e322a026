'use strict'

// A bench server kind on N processes for run.js --workers N: node:cluster, the
// workers sharing one listening socket as zcopy serve's do. The primary tells
// its parent { port } once every worker listens, and on SIGTERM stops them
// and exits.

const cluster = require('node:cluster')

// `start` → Promise of the port the calling process listens on.
function serveInCluster (workers, start) {
  if (cluster.isWorker) return start().then((port) => process.send({ port }))
  cluster.schedulingPolicy = cluster.SCHED_NONE
  let listening = 0
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('message', ({ port }) => {
      if (++listening === workers) process.send({ port })
    })
  }
  process.once('SIGTERM', () => {
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers).length === 0) process.exit(0)
    })
    for (const worker of Object.values(cluster.workers)) worker.kill()
  })
}

module.exports = { serveInCluster }
