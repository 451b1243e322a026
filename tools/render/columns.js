'use strict'

const { formatNumber, formatMBps, formatRatio, formatMiB, formatSize } = require('./format')

// ` (min–max)` after a figure measured over several rounds that differed,
// nothing otherwise (a single round; the baseline's own ratio, 1 in each).
const spread = (range, format) => range && range.min !== range.max ? ` (${format(range.min)}–${format(range.max)})` : ''

// The columns of the text and markdown tables: header, cell text, alignment.
// The ratio's header names the baseline (see withBaseline).
const COLUMNS = [
  { header: 'mode', cell: (row) => row.mode },
  { header: 'size', cell: (row) => formatSize(row.size), right: true },
  { header: 'method', cell: (row) => row.method },
  { header: 'MB/s', cell: (row) => formatMBps(row.throughput) + spread(row.throughputRange, formatMBps), right: true },
  { header: 'ops/s', cell: (row) => formatNumber(row.opsPerSec), right: true },
  { header: 'p50 ms', cell: (row) => formatNumber(row.p50), right: true },
  { header: 'p99 ms', cell: (row) => formatNumber(row.p99), right: true },
  { header: 'CPU user ms/GiB', cell: (row) => formatNumber(row.cpuPerGiB.user), right: true },
  { header: 'CPU sys ms/GiB', cell: (row) => formatNumber(row.cpuPerGiB.system), right: true },
  { header: 'main thread ms/GiB', cell: (row) => formatNumber(row.cpuPerGiB.mainThread), right: true },
  { header: 'peak RSS MiB', cell: (row) => formatMiB(row.peakRss), right: true },
  { header: 'vs stream', ratio: true, cell: (row) => formatRatio(row.ratio) + spread(row.ratioRange, formatNumber), right: true }
]

// The default terminal view, within 80 columns: throughput (its median alone),
// latency, what the event loop pays, and the ratio (--wide, --markdown and
// --json have the rest).
const NARROW = ['mode', 'size', 'method', 'MB/s', 'p50 ms', 'p99 ms', 'main thread ms/GiB', 'vs stream']
  .map((header) => COLUMNS.find((column) => column.header === header))
  .map((column) => {
    if (column.header === 'main thread ms/GiB') return { ...column, header: 'main ms/GiB' }
    if (column.header === 'MB/s') return { ...column, cell: (row) => formatMBps(row.throughput) }
    return column
  })

// `columns` with the ratio's header naming `baseline` ('vs copyFile').
function withBaseline (columns, baseline) {
  return columns.map((column) => column.ratio ? { ...column, header: `vs ${baseline}` } : column)
}

module.exports = { COLUMNS, NARROW, withBaseline }
