'use strict'

// How much compression a variant store may do: at most `ms` milliseconds of
// compression CPU in any WINDOW_MS (a minute), counted in one-second slots.
// Past it, nothing new is queued or started (the file itself is sent) until
// older work leaves the window. A job is counted when it ends, so the bound is
// `ms` plus the jobs under way when it was reached (one per `concurrency`, a
// second of CPU at most each: brotli 11 of 1 MiB).

const WINDOW_MS = 60_000
const SLOT_MS = 1000
const SLOTS = WINDOW_MS / SLOT_MS

class CpuBudget {
  constructor (ms) {
    this.ms = ms
    this.spentIn = new Float64Array(SLOTS) // ms spent in each slot of the window
    this.slotOf = new Float64Array(SLOTS).fill(-1) // which second each slot holds
  }

  // `ms` of compression just ended.
  spend (ms) {
    const second = Math.floor(Date.now() / SLOT_MS)
    const at = second % SLOTS
    if (this.slotOf[at] !== second) {
      this.slotOf[at] = second
      this.spentIn[at] = 0
    }
    this.spentIn[at] += ms
  }

  // Whether the last WINDOW_MS used it all.
  exhausted () {
    const second = Math.floor(Date.now() / SLOT_MS)
    let spent = 0
    for (let at = 0; at < SLOTS; at++) {
      if (second - this.slotOf[at] < SLOTS) spent += this.spentIn[at]
    }
    return spent >= this.ms
  }
}

module.exports = { CpuBudget, WINDOW_MS }
