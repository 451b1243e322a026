'use strict'

// `--help` / `-h` for the benchmark scripts: their usage is the comment at the
// top of the script (after the shebang and 'use strict'), printed as it reads.

const fs = require('node:fs')

// The leading `//` comment block of `file`, without the comment markers.
function headerComment (file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  let i = 0
  while (i < lines.length && (lines[i].startsWith('#!') || /^\s*('use strict'|"use strict")?\s*$/.test(lines[i]))) i++
  const out = []
  for (; i < lines.length && lines[i].startsWith('//'); i++) out.push(lines[i].replace(/^\/\/ ?/, ''))
  return out.join('\n').trim() + '\n'
}

// Prints the usage and exits 0 when the arguments ask for help (before any
// other option is checked, so `--help` works whatever else is on the line).
function helpIfAsked (file, args = process.argv.slice(2)) {
  const end = args.indexOf('--')
  const own = end === -1 ? args : args.slice(0, end)
  if (!own.some((arg) => arg === '--help' || arg === '-h')) return
  process.stdout.write(headerComment(file))
  process.exit(0)
}

module.exports = { headerComment, helpIfAsked }
