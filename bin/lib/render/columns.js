'use strict'

const { formatNumber, formatMBps, formatRatio, formatMiB, formatSize } = require('./format')

// The columns of the text and markdown tables: header, cell text, alignment.
const COLUMNS = [
  { header: 'mode', cell: row => row.mode },
  { header: 'size', cell: row => formatSize(row.size), right: true },
  { header: 'method', cell: row => row.method },
  { header: 'MB/s', cell: row => formatMBps(row.throughput), right: true },
  { header: 'ops/s', cell: row => formatNumber(row.opsPerSec), right: true },
  { header: 'p50 ms', cell: row => formatNumber(row.p50), right: true },
  { header: 'p99 ms', cell: row => formatNumber(row.p99), right: true },
  { header: 'CPU user ms/GiB', cell: row => formatNumber(row.cpuPerGiB.user), right: true },
  { header: 'CPU sys ms/GiB', cell: row => formatNumber(row.cpuPerGiB.system), right: true },
  { header: 'main thread ms/GiB', cell: row => formatNumber(row.cpuPerGiB.mainThread), right: true },
  { header: 'peak RSS MiB', cell: row => formatMiB(row.peakRss), right: true },
  { header: 'vs stream', cell: row => formatRatio(row.ratio), right: true }
]

// The default terminal view, within 80 columns: throughput, latency, what the
// event loop pays, and the ratio (--wide, --markdown and --json have the rest).
const NARROW = ['mode', 'size', 'method', 'MB/s', 'p50 ms', 'p99 ms', 'main thread ms/GiB', 'vs stream']
  .map((header) => COLUMNS.find((column) => column.header === header))
  .map((column) => column.header === 'main thread ms/GiB' ? { ...column, header: 'main ms/GiB' } : column)

module.exports = { COLUMNS, NARROW }
