'use strict'

// The bytes a server may keep in memory for the bodies it answers from there:
// small, hot files (the open-file cache) and compressed variants (the variant
// store) take from one budget (serveStatic's `memoryCache`), handed to both.

class MemoryBudget {
  constructor (bytes = 0) {
    this.bytes = bytes
    this.used = 0
  }

  // Takes `bytes` of the budget: → whether they fit. Give them back with free().
  reserve (bytes) {
    if (this.used + bytes > this.bytes) return false
    this.used += bytes
    return true
  }

  free (bytes) {
    this.used -= bytes
  }
}

module.exports = { MemoryBudget }
