'use strict'

// A synchronous stat, on purpose: a metadata lookup in the page cache costs about a
// microsecond on the event loop, a thread-pool round trip ten or more, and this
// runs on every request (nginx makes the same trade).

const fs = require('node:fs')

// fs.Stats, or undefined when nothing is there (ENOENT, ENOTDIR); other failures throw.
function statOrNothing (file) {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })
  } catch (err) {
    if (err.code === 'ENOTDIR') return undefined
    throw err
  }
}

module.exports = { statOrNothing }
