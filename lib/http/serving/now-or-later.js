'use strict'

// The one convention of the request path's steps: a step returns its result
// when it has it within the call (the open-file cache has the file open, a
// body went out from memory), or a Promise of it when it had to wait (the
// cache opening a file, a body still going out). Every caller adapts that
// shape here, and nowhere else tests for a promise.
//
// Why not always a Promise: on a cache hit the whole answer runs within the
// request's call, and a promise there, with the closure and `catch` its
// continuation needs, was a measurable part of the 9k instructions per request
// that f1e603e removed (4 KiB, callgrind, docs/benchmarks-log.md "2026-11-27:
// a cache hit with fewer instructions").

// Whether `result` is still to come.
function isLater (result) {
  return result instanceof Promise
}

// next(result) now, or once `result` settles: next's return, or its promise.
// (A step on a cache hit's path tests isLater() itself, so that the closure it
// would pass is made only when the result is still to come.)
function andThen (result, next) {
  return isLater(result) ? result.then(next) : next(result)
}

module.exports = { andThen, isLater }
