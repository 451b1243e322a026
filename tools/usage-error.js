'use strict'

// An error in what the user typed. The CLI prints its message on one line and
// exits with code 2; anything else is a runtime failure (exit code 1).
class UsageError extends Error {
  constructor (message) {
    super(message)
    this.name = 'UsageError'
  }
}

const COMMANDS = ['bench', 'serve', 'doctor', 'build']

// The one line a failure prints: a usage error names the help that lists the
// flags, the subcommand's when one was typed (`zcopy serve --help`).
function failureLine (err, args = []) {
  const message = String(err.message).replace(/\s*\n\s*/g, ' ')
  if (!(err instanceof UsageError) && !err.usage) return `zcopy: ${message}`
  const command = args.find((arg) => COMMANDS.includes(arg))
  return `zcopy: ${message} (see 'zcopy${command ? ` ${command}` : ''} --help')`
}

module.exports = { UsageError, failureLine, COMMANDS }
