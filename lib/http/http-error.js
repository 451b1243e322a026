'use strict'

// An error that carries the HTTP status it should be answered with, shaped like
// http-errors' (status, statusCode, expose, headers) so Express' final handler and
// Connect-style error middleware render it as they render send's errors.

const { STATUS_CODES } = require('node:http')

class HttpError extends Error {
  constructor (status, { headers, cause } = {}) {
    super(STATUS_CODES[status] || String(status), cause === undefined ? undefined : { cause })
    this.name = 'HttpError'
    this.status = status
    this.statusCode = status
    this.expose = status < 500
    if (headers !== undefined) this.headers = headers
    if (cause && cause.code !== undefined) this.code = cause.code
  }
}

// A filesystem error met while looking a file up, as the status it deserves:
// a name that cannot exist is "not found", anything else is the server's fault.
function lookupError (err) {
  switch (err.code) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
      return new HttpError(404, { cause: err })
    default:
      return new HttpError(500, { cause: err })
  }
}

module.exports = { HttpError, lookupError }
