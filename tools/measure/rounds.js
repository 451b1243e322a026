'use strict'

const { median } = require('../median')

// Rows measured in several rounds (each with `round` and its `ratio` over the
// baseline of the same round) → one row per mode, size and method, in the order
// first measured: every figure the median of its rounds (cpuPerGiB field by
// field; null where a round has none), the throughput's and the ratio's min and
// max beside them. The ratio is thus the median of the per-round ratios, not a
// ratio of medians.
function combineRounds (rows) {
  const groups = new Map()
  for (const { round, ...row } of rows) {
    const key = `${row.mode} ${row.size} ${row.method}`
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(row)
  }
  return [...groups.values()].map(combine)
}

function medianOf (values) {
  return values.some((value) => value === null) ? null : median(values)
}

function rangeOf (values) {
  return values.some((value) => value === null) ? null : { min: Math.min(...values), max: Math.max(...values) }
}

function combine (rounds) {
  const [{ mode, size, method }] = rounds
  const field = (key) => rounds.map((row) => row[key])
  const cpu = (key) => medianOf(rounds.map((row) => row.cpuPerGiB[key]))
  return {
    mode,
    size,
    method,
    rounds: rounds.length,
    throughput: median(field('throughput')),
    throughputRange: rangeOf(field('throughput')),
    opsPerSec: median(field('opsPerSec')),
    p50: median(field('p50')),
    p99: median(field('p99')),
    cpuPerGiB: { user: cpu('user'), system: cpu('system'), mainThread: cpu('mainThread') },
    peakRss: medianOf(field('peakRss')),
    operations: median(field('operations')),
    bytesMoved: median(field('bytesMoved')),
    seconds: median(field('seconds')),
    ratio: medianOf(field('ratio')),
    ratioRange: rangeOf(field('ratio'))
  }
}

module.exports = { combineRounds }
