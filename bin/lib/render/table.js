'use strict'

const { COLUMNS, withBaseline } = require('./columns')
const { describeReport } = require('./format')

const TERMINAL_WIDTH = 80

// The machine line, broken at its ' · ' separators to fit a terminal.
function wrapMachine (text) {
  const lines = []
  for (const part of text.split(' · ')) {
    const last = lines.length - 1
    if (last >= 0 && lines[last].length + 3 + part.length <= TERMINAL_WIDTH) lines[last] += ' · ' + part
    else lines.push(part)
  }
  return lines
}

// A plain-text table for a terminal, one block per mode.
function renderTable (report, columns = COLUMNS) {
  const { results, baseline = 'stream' } = report
  columns = withBaseline(columns, baseline)
  const cells = results.map(row => columns.map(column => column.cell(row)))
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map(line => line[i].length)))
  const line = texts => texts.map((text, i) =>
    columns[i].right ? text.padStart(widths[i]) : text.padEnd(widths[i])).join('  ').trimEnd()
  const out = [...wrapMachine(describeReport(report)), '', line(columns.map(column => column.header))]
  cells.forEach((texts, i) => {
    if (i > 0 && results[i].mode !== results[i - 1].mode) out.push('')
    out.push(line(texts))
  })
  return out.join('\n') + '\n'
}

module.exports = { renderTable }
