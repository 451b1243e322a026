'use strict'

// The errors @fastify/static throws and answers with, by the same codes, names,
// messages and statuses (tests and apps match on those), without @fastify/error.

const { format } = require('node:util')

function errorClass (code, message, statusCode = 500, Base = Error) {
  class FastifyError extends Base {
    constructor (...args) {
      super(format(message, ...args))
      this.name = 'FastifyError'
      this.code = code
      this.statusCode = statusCode
    }
  }
  FastifyError.prototype[Symbol.toStringTag] = 'Error'
  return FastifyError
}

module.exports = {
  FST_STATIC_INVALID_OPTION: errorClass('FST_STATIC_INVALID_OPTION', '"%s" option %s'),
  FST_STATIC_INVALID_OPTION_VALUE: errorClass('FST_STATIC_INVALID_OPTION_VALUE', '"%s" option %s', 500, TypeError),
  FST_STATIC_MULTIROOT_LIST_CONFLICT: errorClass('FST_STATIC_MULTIROOT_LIST_CONFLICT', 'multi-root with list option is not supported', 500, TypeError),
  FST_STATIC_INVALID_REDIRECT_URL: errorClass('FST_STATIC_INVALID_REDIRECT_URL', 'Invalid redirect URL: "%s"', 400),
  FST_STATIC_FORBIDDEN_PATH: errorClass('FST_STATIC_FORBIDDEN_PATH', 'Forbidden', 403)
}
