'use strict'

// The read buffers of every copy paced by a Flight in this process
// (range-copy.js): one PiecePool of 16 KiB pieces (one TLS record), under
// the process's copy budget (ZCOPY_COPY_BUDGET, copy-budget.js).
//
// Once the pool saw a whole idle period, it lets its spares go and has the
// addon hand the C heap's free pages back to the system (trimMemory), and again
// after V8's next full collection: the TLS buffers of a crowd of clients, freed
// among allocations that stay (most of them only once V8 collects the
// connections' objects), would otherwise keep the process at the crowd's size.

const { PerformanceObserver, constants: perfConstants } = require('node:perf_hooks')
const { PiecePool } = require('./piece-pool')
const { copyBudget } = require('./copy-budget')
const { trimMemory } = require('../addon-calls')

const PIECE_SIZE = 16 * 1024

const pool = new PiecePool({
  pieceSize: PIECE_SIZE,
  budget: copyBudget(),
  keep: 256,
  idleMs: 2000,
  onIdle: trimMemory === null ? null : trimNowAndAfterCollection
})

// What a crowd of clients' connections held in the C heap (OpenSSL's and
// Node's TLS buffers) is freed only when V8 collects their objects, and an
// idle process collects late (V8's memory reducer: 10 to 30 s after the
// clients left, measured on 1,000 TLS clients), after the pool's trim ran. So
// the C heap is trimmed once more after the next full collection, if the pool
// is still idle then: a 'gc' PerformanceObserver (public API) watches for it,
// from the pool's idle sweep until then.
let collectionWatch = null
function trimNowAndAfterCollection () {
  trimMemory()
  if (collectionWatch !== null) return
  collectionWatch = new PerformanceObserver((list) => {
    if (!list.getEntries().some((observed) => observed.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)) return
    collectionWatch.disconnect()
    collectionWatch = null
    if (pool.idle) trimMemory()
  })
  collectionWatch.observe({ entryTypes: ['gc'] })
}

module.exports = { pool, PIECE_SIZE }
