'use strict'

// The errors sendFile rejects with and serveStatic passes to next(err): the ones
// send (hence express.static / serve-static) gives, made by http-errors as send
// makes them, so error handlers written for express.static keep working.
//
// - Refusals and misses with no file-system cause: http-errors instances
//   (NotFoundError, ForbiddenError, BadRequestError, PreconditionFailedError,
//   RangeNotSatisfiableError…), `expose: true`, the status text as message.
// - A file-system error as the cause (ENOENT, ENOTDIR, ENAMETOOLONG → 404; EISDIR,
//   EACCES, EMFILE… → 500): that error itself, with status, statusCode and
//   `expose: false` added, so its code, errno, syscall, path and stack survive.

const createError = require('http-errors')

// send's createHttpError(status, err): an Error becomes the error itself, decorated
// with the status and `expose: false`; an object is taken as properties (416's
// `headers`).
function httpError (status, cause) {
  if (cause === undefined) return createError(status)
  return cause instanceof Error ? createError(status, cause, { expose: false }) : createError(status, cause)
}

// A system error as Node's asynchronous fs calls give it (send's): its first line
// alone as the stack, no frames. The lookups and opens are asynchronous, but the
// fstat of an opened descriptor (./open-confined) is synchronous: an error of its
// would otherwise show zcopy's own files on an error page (Express's, in development).
function withoutFrames (err) {
  err.stack = `${err.name}: ${err.message}`
  return err
}

// A file-system error met while looking a file up, as send's onStatError answers
// it: a name that cannot exist is "not found", anything else is the server's fault.
function lookupError (err) {
  withoutFrames(err)
  switch (err.code) {
    case 'ENAMETOOLONG':
    case 'ENOENT':
    case 'ENOTDIR':
      return httpError(404, err)
    default:
      return httpError(500, err)
  }
}

// The class every error above is an instance of (`err instanceof HttpError`, as
// http-errors' isHttpError judges it: http-errors instances and errors decorated
// with status/statusCode/expose). `new HttpError(status, { headers, cause })`
// makes http-errors' error for the status (`new HttpError(404)` is a NotFoundError),
// with `headers` and, for diagnosis, `cause`.
function HttpError (status, { headers, cause } = {}) {
  if (new.target === undefined) throw new TypeError('Class constructor HttpError cannot be invoked without \'new\'')
  const err = headers === undefined ? createError(status) : createError(status, { headers })
  Error.captureStackTrace(err, HttpError)
  if (cause !== undefined) {
    Object.defineProperty(err, 'cause', { value: cause, configurable: true, writable: true, enumerable: false })
  }
  return err
}
HttpError.prototype = createError.HttpError.prototype
Object.defineProperty(HttpError, Symbol.hasInstance, { value: createError.isHttpError })

const isHttpError = createError.isHttpError

module.exports = { HttpError, httpError, isHttpError, lookupError }
