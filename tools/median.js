'use strict'

// The median of numbers (the mean of the two middle ones for an even count).
function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

module.exports = { median }
