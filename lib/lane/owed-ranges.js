'use strict'

// The file ranges of lent answers that the native lane sends on alone (Node's
// answer ended before its body went: twin.js), by the id of the request they
// answer: each settles once the lane says how it ended (onWritten, onGone).
class OwedRanges {
  constructor () {
    this.ranges = new Map() // id → { resolve, length }
  }

  // → Promise of { bytes, complete, truncated } (never rejected).
  add (id, length) {
    return new Promise((resolve) => this.ranges.set(id, { resolve, length }))
  }

  written (id) {
    this.settle(id, (length) => ({ bytes: length, complete: true, truncated: false }))
  }

  // Cut after `bytes` of it went; `truncated`: the file ended before the range.
  cut (id, bytes, truncated) {
    this.settle(id, () => ({ bytes, complete: false, truncated }))
  }

  settle (id, outcome) {
    const range = this.ranges.get(id)
    if (range === undefined) return
    this.ranges.delete(id)
    range.resolve(outcome(range.length))
  }
}

module.exports = { OwedRanges }
