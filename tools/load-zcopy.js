'use strict'

// The zcopy package this CLI ships with. A failure to load it is a broken
// install, reported as such rather than as a stack trace.
function loadZcopy () {
  try {
    return require('../lib')
  } catch (err) {
    throw new Error(`could not load the zcopy library: ${err.message.split('\n')[0]}`)
  }
}

module.exports = { loadZcopy }
