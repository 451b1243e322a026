'use strict'

// `--help` / `-h` for the benchmark scripts: their usage is the comment at the
// top of the script (after the shebang and 'use strict'), printed as it reads;
// and their options, parsed one way: a bad one is a line on stderr, exit 2.

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')

const REPO = path.join(__dirname, '..', '..')

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

// Bad usage of the script `file`: one line on stderr (its path in the
// repository, then `message`), exit code 2.
function usageError (file, message) {
  process.stderr.write(`${path.relative(REPO, file)}: ${message.replace(/\n/g, ' ')}\n`) // parseArgs' may take lines
  process.exit(2)
}

// The options of the script `file` (`config` as node:util's parseArgs takes
// it, strict): --help first (helpIfAsked), then an unknown option, a missing
// value or a stray argument is a usageError. → parseArgs' { values, positionals }.
function parseOptions (file, config) {
  helpIfAsked(file)
  try {
    return parseArgs({ args: process.argv.slice(2), ...config })
  } catch (err) {
    usageError(file, err.message)
  }
}

module.exports = { headerComment, helpIfAsked, parseOptions, usageError }
