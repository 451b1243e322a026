'use strict'

// The variants waiting to be made, and when the next one starts: at most
// `concurrency` at once, within the CPU budget, and a burst held back while the
// event loop is busy (see ./store's opening comment). A job is the store's
// ({ record, encoding, ... }); `run(job)` makes it (→ Promise, settled when it
// is done, whichever way), `overBudget(job)` hears one dropped because the
// budget ran out (it is asked for again by a later request).

const { loopBusy, WINDOW_MS } = require('./loop-busy')
const { PATIENCE_MS } = require('./priority')

const MAX_QUEUED = 1024 // variants waiting to be made; more are asked for again later
const BURST = 4 // jobs waiting from which they are held back while the event loop is busy
const MAX_DEFER_MS = PATIENCE_MS // the longest a burst's first job is held back
const BUSY_SHARE = 0.05 // the share of the time a burst's jobs run once held that long, while the loop stays busy

class CompressionQueue {
  // `budget`: the CpuBudget compressions spend.
  constructor ({ concurrency, budget, run, overBudget }) {
    this.concurrency = concurrency
    this.budget = budget
    this.run = run
    this.overBudget = overBudget
    this.jobs = []
    this.running = 0
    this.pumpTimer = null // a later look at the queue, while the event loop is busy
    this.restUntil = 0 // while the loop stays busy, no job starts before (Date.now())
    this.idle = [] // whenIdle()'s resolvers
  }

  // Whether another job may be queued now.
  full () {
    return this.jobs.length >= MAX_QUEUED
  }

  // Jobs waiting or being made.
  pending () {
    return this.jobs.length + this.running
  }

  push (job) {
    job.queuedAt = Date.now()
    this.jobs.push(job)
    this.pump()
  }

  pump () {
    while (this.running < this.concurrency && this.jobs.length > 0) {
      if (this.holding()) return this.pumpLater()
      const job = this.jobs.shift()
      if (this.budget.exhausted()) {
        this.overBudget(job)
        this.settleIfIdle()
        continue
      }
      this.start(job)
    }
  }

  start (job) {
    const started = Date.now()
    this.running++
    this.run(job).finally(() => {
      this.running--
      const ended = Date.now()
      this.restUntil = ended + (ended - started) * (1 / BUSY_SHARE - 1)
      this.settleIfIdle()
      this.pump()
    })
  }

  // Whether the next job waits: a burst while the event loop is busy, whose
  // first job waited less than MAX_DEFER_MS, or whose last job ended too
  // recently for compressions to run more than BUSY_SHARE of the time.
  holding () {
    if (this.jobs.length < BURST) return false
    const now = Date.now()
    if (now - this.jobs[0].queuedAt >= MAX_DEFER_MS && now >= this.restUntil) return false
    return loopBusy()
  }

  pumpLater () {
    if (this.pumpTimer !== null) return
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null
      this.pump()
    }, WINDOW_MS)
    this.pumpTimer.unref()
  }

  // → Promise resolved once no job waits or runs.
  whenIdle () {
    if (this.pending() === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  settleIfIdle () {
    if (this.pending() !== 0) return
    const waiting = this.idle
    this.idle = []
    for (const resolve of waiting) resolve()
  }

  // Drops every waiting job (those running finish).
  clear () {
    this.jobs.length = 0
    clearTimeout(this.pumpTimer)
    this.pumpTimer = null
    this.settleIfIdle()
  }
}

module.exports = { CompressionQueue }
