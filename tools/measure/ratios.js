'use strict'

// Adds `key` to every row: its throughput over the throughput of the
// `baseline` method's row with the same mode and size, measured in the same
// round (null without one).
function addRatios (rows, { key = 'ratio', baseline = 'stream' } = {}) {
  return rows.map((row) => {
    const base = rows.find((other) => other.mode === row.mode && other.size === row.size &&
      other.round === row.round && other.method === baseline)
    return { ...row, [key]: base ? row.throughput / base.throughput : null }
  })
}

module.exports = { addRatios }
