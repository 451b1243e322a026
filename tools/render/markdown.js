'use strict'

const { COLUMNS, withBaseline } = require('./columns')
const { describeReport } = require('./format')

// A GitHub-flavoured markdown table, preceded by the machine and date.
function renderMarkdown (report, columns = COLUMNS) {
  const { results, baseline = 'stream' } = report
  columns = withBaseline(columns, baseline)
  const row = (texts) => `| ${texts.join(' | ')} |`
  return [
    describeReport(report),
    '',
    row(columns.map((column) => column.header)),
    row(columns.map((column) => column.right ? '---:' : '---')),
    ...results.map((result) => row(columns.map((column) => column.cell(result))))
  ].join('\n') + '\n'
}

module.exports = { renderMarkdown }
