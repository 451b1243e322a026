'use strict'

const { COLUMNS } = require('./columns')
const { describeMachine } = require('./format')

// A GitHub-flavoured markdown table, preceded by the machine and date.
function renderMarkdown ({ machine, results }, columns = COLUMNS) {
  const row = texts => `| ${texts.join(' | ')} |`
  return [
    describeMachine(machine),
    '',
    row(columns.map(column => column.header)),
    row(columns.map(column => column.right ? '---:' : '---')),
    ...results.map(result => row(columns.map(column => column.cell(result))))
  ].join('\n') + '\n'
}

module.exports = { renderMarkdown }
