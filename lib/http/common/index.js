'use strict'

// The leaves of the HTTP layer: every folder of lib/http may use them, they
// use none. Errors that carry their status, the one style of a bad option's
// error, a socket's close heard once, a value or its promise as a promise.

const { HttpError, httpError, isHttpError, lookupError } = require('./http-error')
const { badOption } = require('./bad-option')
const { onClose } = require('./on-close')
const { promiseOf } = require('./promise-of')

module.exports = { HttpError, httpError, isHttpError, lookupError, badOption, onClose, promiseOf }
