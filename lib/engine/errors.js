'use strict'

// Errors shaped like Node's own (code, and errno/syscall for system errors).

function describe (value) {
  if (value === null) return 'null'
  if (typeof value === 'function') return `function ${value.name || '<anonymous>'}`
  if (typeof value === 'object') {
    const name = value.constructor && value.constructor.name
    return name ? `an instance of ${name}` : 'an object'
  }
  let shown = String(value)
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`
  if (typeof value === 'string') shown = `'${shown}'`
  return `type ${typeof value} (${shown})`
}

function withCode (err, code) {
  err.code = code
  return err
}

function invalidArgType (name, expected, actual) {
  return withCode(new TypeError(
    `The "${name}" argument must be ${expected}. Received ${describe(actual)}`
  ), 'ERR_INVALID_ARG_TYPE')
}

function invalidArgValue (name, value, reason) {
  return withCode(new TypeError(
    `The argument '${name}' ${reason}. Received ${describe(value)}`
  ), 'ERR_INVALID_ARG_VALUE')
}

function outOfRange (name, range, value) {
  return withCode(new RangeError(
    `The value of "${name}" is out of range. It must be ${range}. Received ${String(value)}`
  ), 'ERR_OUT_OF_RANGE')
}

class AbortError extends Error {
  constructor (options) {
    super('The operation was aborted', options)
    this.name = 'AbortError'
    this.code = 'ABORT_ERR'
  }
}

function abortError (signal) {
  return new AbortError(signal ? { cause: signal.reason } : undefined)
}

function truncatedError (offset, missing) {
  const error = withCode(new Error(
    `Source file ended at byte ${offset} with ${missing} bytes of the requested range unsent (was it truncated?)`
  ), 'ERR_ZCOPY_TRUNCATED')
  error.syscall = 'read'
  return error
}

function isDirectoryError (syscall) {
  const error = withCode(new Error(`EISDIR: illegal operation on a directory, ${syscall}`), 'EISDIR')
  error.errno = -require('node:os').constants.errno.EISDIR
  error.syscall = syscall
  return error
}

// A connection the client closed under a write (a destination that is not a
// socket says so as a socket's write would).
function clientClosedError () {
  return withCode(new Error('The client closed the connection'), 'EPIPE')
}

function prematureCloseError () {
  return withCode(new Error('Premature close'), 'ERR_STREAM_PREMATURE_CLOSE')
}

module.exports = {
  AbortError,
  abortError,
  clientClosedError,
  invalidArgType,
  invalidArgValue,
  isDirectoryError,
  outOfRange,
  prematureCloseError,
  truncatedError
}
