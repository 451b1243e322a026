'use strict'

// An error in what the user typed. The CLI prints its message on one line and
// exits with code 2; anything else is a runtime failure (exit code 1).
class UsageError extends Error {
  constructor (message) {
    super(message)
    this.name = 'UsageError'
  }
}

module.exports = { UsageError }
