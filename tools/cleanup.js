'use strict'

// Synchronous cleanup that must run however the process ends: normal exit,
// Ctrl-C (SIGINT), SIGTERM or SIGHUP. Handlers run once, in reverse order of
// registration.

const handlers = []
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }
let installed = false

function runCleanup () {
  while (handlers.length > 0) {
    const handler = handlers.pop()
    try {
      handler()
    } catch {
      // Best effort: one failing handler must not keep the others from running.
    }
  }
}

function install () {
  installed = true
  process.on('exit', runCleanup)
  for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
    process.once(signal, () => {
      runCleanup()
      process.exit(code)
    })
  }
}

// Registers `handler`; returns a function that runs it now and unregisters it.
function onCleanup (handler) {
  if (!installed) install()
  handlers.push(handler)
  return function cleanUpNow () {
    const index = handlers.indexOf(handler)
    if (index === -1) return
    handlers.splice(index, 1)
    handler()
  }
}

module.exports = { onCleanup }
