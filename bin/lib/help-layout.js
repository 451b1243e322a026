'use strict'

// The width --help is laid out for, and the Examples block of a command's help.
//
// yargs lays examples out in two columns and caps the command column at half
// the width, so a longer command wraps in the middle (`zcopy bench --mode
// socket --sizes 1GiB` / `--iterations 5`) and copying its first line runs
// another command. Here a command never wraps: one that does not fit the
// column gets a line of its own, its description on the next line, indented
// to the description column. The block goes into the epilog, where yargs keeps
// lines that fit the width as they are (leading spaces become its padding).

// The terminal's width (COLUMNS when stdout is not a terminal), at most 100.
function helpWidth () {
  const columns = process.stdout.columns || Number.parseInt(process.env.COLUMNS, 10)
  return Math.min(100, columns > 0 ? columns : 100)
}

// Words of `text` in lines of at most `width` characters (a longer word alone).
function wrapWords (text, width) {
  const lines = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines
}

const INDENT = 2
const GAP = 2

// [[command, description], ...] with '$0' for the program name → the text of
// an "Examples:" block whose lines are at most `width` characters.
function renderExamples (examples, width = helpWidth(), name = 'zcopy') {
  const rows = examples.map(([command, description]) => [command.replace(/\$0/g, name), description])
  const cap = Math.floor(width / 2)
  const fitting = rows.map(([command]) => command.length).filter((length) => length <= cap)
  const column = INDENT + Math.max(0, ...fitting) + GAP
  const lines = ['Examples:']
  for (const [command, description] of rows) {
    const text = wrapWords(description, Math.max(20, width - column))
    if (command.length <= cap && text.length > 0) {
      lines.push(' '.repeat(INDENT) + command.padEnd(column - INDENT) + text[0])
      text.shift()
    } else {
      lines.push(' '.repeat(INDENT) + command)
    }
    for (const more of text) lines.push(' '.repeat(column) + more)
  }
  return lines.join('\n')
}

module.exports = { helpWidth, renderExamples, wrapWords }
