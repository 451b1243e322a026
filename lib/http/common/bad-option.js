'use strict'

// The one way a bad option is reported, by every entry point (serveStatic,
// sendFile, zcopy/koa, zcopy/fastify): a TypeError (a wrong kind) or a
// RangeError (out of range) that names the option, says what it must be and
// shows what it got, as in "options.maxOpenFiles must be a non-negative
// integer, got -1". Imports nothing of lib/http, so that every folder may use it.

const { inspect } = require('node:util')

const SHOWN = 60 // characters of the value shown at most

// `value` as the message shows it: 'yes' quoted, [ 1 ] as an array, a
// function by its name; cut to SHOWN characters.
function shown (value) {
  const text = inspect(value, { depth: 1, breakLength: Infinity, maxArrayLength: 8, maxStringLength: SHOWN })
  return text.length > SHOWN ? text.slice(0, SHOWN - 1) + '…' : text
}

// → the error for option `name` ('maxAge', 'compress.threshold'; '' for the
// options object itself), which `mustBe` describes ('a function'), given `got`.
function badOption (name, mustBe, got, Kind = TypeError) {
  return new Kind(`${name === '' ? 'options' : `options.${name}`} must be ${mustBe}, got ${shown(got)}`)
}

module.exports = { badOption }
