'use strict'

// --workers N: node:cluster. The primary forks N workers (each runs this same
// command and serves the port), prints the banner once all of them listen,
// replaces a worker that crashes (killed by a signal or exiting non-zero once
// it had been listening), and on SIGINT or SIGTERM tells every worker to
// drain, then exits 0 when all have. A worker that cannot start (port in
// use...) stops them all: exit code 1 (2 for a usage error), one line on stderr.
//
// The workers share one listening socket and each accepts from it when it is
// free (cluster.SCHED_NONE), rather than the primary accepting every connection
// and handing it over (node:cluster's default round-robin: one more process hop
// per connection) or one SO_REUSEPORT listener per worker (the kernel picks a
// worker by the connection's address hash, busy or not; and a worker that
// dies takes the connections queued on its listener with it). On 2 cores it
// served 2.2–2.4× the short connections of round-robin and 1.4× those of
// reusePort, kept-alive ones about as fast (0.93–1.2×; README, "Every core").
// NODE_CLUSTER_SCHED_POLICY=rr still chooses round-robin. With --native-lane
// the primary listens instead, through the addon, and every worker's lane
// accepts from that socket (shared-listener.js); a port the primary cannot
// listen on is then its own failure, said in the same line.

const cluster = require('node:cluster')
const { announceListening } = require('./announce')
const { createInstance, stopSignal } = require('./instance')
const { portTakenLine } = require('./listen-port')
const { shareListener } = require('./shared-listener')
const { openUrl } = require('./open')
const { UsageError, failureLine } = require('../../../tools/usage-error')

const FATAL_TO_PRIMARY = 'zcopy:fatal'
const LISTENING = 'zcopy:listening'
const STOP = 'zcopy:stop'

function ignoreSendError () {}

async function runWorker ({ zcopy, root, config, write }) {
  const stopped = stopSignal((resolve) => process.on('message', (message) => { if (message && message.type === STOP) resolve() }))
  const instance = createInstance({ zcopy, root, config, write })
  let address
  try {
    address = await instance.listen(() => {})
  } catch (err) {
    process.send({ type: FATAL_TO_PRIMARY, message: err.message, usage: err instanceof UsageError }, () => process.exit(1))
    return
  }
  // With compression, where this worker's variants go (its store's folder,
  // made meanwhile: usually at once), for the primary's start line.
  const variantsFolder = instance.variantsFolder === null ? null : await instance.variantsFolder
  process.send({ type: LISTENING, address, variantsFolder })
  await stopped
  await instance.stop()
  process.exit(0)
}

async function runPrimary (context) {
  let shared = null
  if (context.config.nativeLane) {
    try {
      shared = await shareListener(context.config)
    } catch (err) {
      const usage = err instanceof UsageError
      process.stderr.write(failureLine({ message: err.message, usage }, ['serve']) + '\n')
      process.exitCode = usage ? 2 : 1
      return
    }
  }
  return superviseWorkers({ ...context, shared })
}

// `shared`: the listener the workers' lanes adopt (shared-listener.js), or null.
function superviseWorkers ({ zcopy, root, config, say, count, shared }) {
  return new Promise((resolve) => {
    const listening = new Map() // worker id → address, once it listens
    // Workers not exited yet, the primary's one list of them. Not cluster.workers:
    // a worker leaves that only once its process has exited and its channel has
    // closed, in either order, and when the close comes last no 'exit' sees the
    // list empty (the primary then ran out of work and exited 0 without a word).
    const running = new Set()
    let announced = false
    const folders = [] // where the first workers' compressed variants go, as each said
    let stopping = false
    let failure = null

    const describeExit = (code, signal) => (signal ? `killed by ${signal}` : `exit code ${code}`)

    function fork () {
      const worker = cluster.fork(shared === null ? undefined : shared.env)
      running.add(worker)
      worker.on('message', (message) => {
        if (!message || typeof message !== 'object') return
        if (message.type === LISTENING) onListening(worker, message.address, message.variantsFolder)
        if (message.type === FATAL_TO_PRIMARY && failure === null) {
          failure = message
          stop()
        }
      })
      return worker
    }

    function onListening (worker, address, variantsFolder) {
      listening.set(worker.id, address)
      if (variantsFolder) folders.push(variantsFolder)
      if (announced) {
        say(`zcopy: worker ${worker.process.pid} listening`, { pid: worker.process.pid })
        return
      }
      if (listening.size < count) return
      announced = true
      if (config.port !== 0 && address.port !== config.port) say(portTakenLine(config.port, address.port))
      const pids = [...running].map((w) => w.process.pid)
      const url = announceListening(say, { root, address, zcopy, config, workers: pids, variantsFolders: folders })
      if (config.open) openUrl(url, say)
    }

    function stop () {
      if (stopping) return
      stopping = true
      if (failure === null) say('zcopy: stopping')
      // No worker is forked from now on; those running keep their copies.
      if (shared !== null) shared.close()
      // A worker may have exited (one that could not listen, right after saying
      // so) before the primary handled its exit or its channel's close: the send
      // then fails with EPIPE, which without a callback is an 'error' event
      // nobody listens to, and the primary crashed (seen once on Node 24). Its
      // exit is what counts, and cluster reports it.
      for (const worker of running) {
        if (worker.isConnected()) worker.send({ type: STOP }, ignoreSendError)
      }
      // A worker that does not exit in time is killed.
      setTimeout(() => {
        for (const worker of running) worker.process.kill('SIGKILL')
      }, config.shutdownTimeout * 1000 + 5000).unref()
    }

    cluster.on('exit', (worker, code, signal) => {
      running.delete(worker)
      const wasListening = listening.delete(worker.id)
      if (stopping || failure !== null) {
        if (running.size === 0) finish()
        return
      }
      if (!wasListening) {
        failure = { message: `a worker could not start (${describeExit(code, signal)})`, usage: false }
        stop()
        if (running.size === 0) finish()
        return
      }
      if (signal || code !== 0) {
        const next = fork()
        say(`zcopy: worker ${worker.process.pid} ${describeExit(code, signal)}; started worker ${next.process.pid}`, { pid: worker.process.pid, code, signal, replacement: next.process.pid })
      } else if (running.size === 0) {
        finish()
      }
    })

    function finish () {
      if (failure !== null) {
        process.stderr.write(failureLine(failure, ['serve']) + '\n')
        process.exitCode = failure.usage ? 2 : 1
      }
      resolve()
    }

    stopSignal().then(stop)
    if (!process.env.NODE_CLUSTER_SCHED_POLICY) cluster.schedulingPolicy = cluster.SCHED_NONE
    for (let i = 0; i < count; i++) fork()
  })
}

module.exports = { runPrimary, runWorker, isWorker: () => cluster.isWorker }
