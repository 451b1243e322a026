'use strict'

const { COLUMNS, withBaseline } = require('./columns')
const { describeReport, wrapAtSeparators } = require('./format')

const TERMINAL_WIDTH = 80

// The table's lines, its columns `gap` apart, one block per mode.
function tableLines (report, columns, gap) {
  const { results } = report
  const cells = results.map((row) => columns.map((column) => column.cell(row)))
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i].length)))
  const line = (texts) => texts.map((text, i) =>
    columns[i].right ? text.padStart(widths[i]) : text.padEnd(widths[i])).join(gap).trimEnd()
  const out = [line(columns.map((column) => column.header))]
  cells.forEach((texts, i) => {
    if (i > 0 && results[i].mode !== results[i - 1].mode) out.push('')
    out.push(line(texts))
  })
  return out
}

// A plain-text table for a terminal. `fit`: the columns go one space apart
// rather than two when that keeps every line within 80 characters (the figures'
// widths depend on the machine: a loaded one has wider spreads and latencies).
function renderTable (report, columns = COLUMNS, { fit = false } = {}) {
  columns = withBaseline(columns, report.baseline ?? 'stream')
  let lines = tableLines(report, columns, '  ')
  if (fit && lines.some((line) => line.length > TERMINAL_WIDTH)) lines = tableLines(report, columns, ' ')
  return [...wrapAtSeparators(describeReport(report), TERMINAL_WIDTH), '', ...lines].join('\n') + '\n'
}

module.exports = { renderTable }
