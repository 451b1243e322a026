'use strict'

// Whether this process's event loop has been busy lately: more than half of
// the last quarter of a second (or of the time since the last look, when that
// was longer ago) spent running callbacks rather than waiting for I/O
// (performance.eventLoopUtilization()). The variant stores (./store.js) start
// no compression while it is: the server is answering, and a compression,
// even one that gives up its CPU at once (SCHED_IDLE), still takes the caches
// and the memory bandwidth its requests use.

const { performance } = require('node:perf_hooks')

const WINDOW_MS = 250
const BUSY = 0.5

let last = performance.eventLoopUtilization()
let lastAt = performance.now()
let busy = false

function loopBusy () {
  const at = performance.now()
  if (at - lastAt >= WINDOW_MS) {
    const now = performance.eventLoopUtilization()
    busy = performance.eventLoopUtilization(now, last).utilization > BUSY
    last = now
    lastAt = at
  }
  return busy
}

module.exports = { loopBusy, WINDOW_MS }
