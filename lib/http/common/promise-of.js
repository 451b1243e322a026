'use strict'

// The request path is plain functions that return a promise but may throw before
// they get to make one (an HttpError found synchronously, a header Node refuses).
// promiseOf(run) → run()'s promise, or a promise rejected with what it threw, so
// that callers handle both in one place.
function promiseOf (run) {
  try {
    return run()
  } catch (err) {
    return Promise.reject(err)
  }
}

module.exports = { promiseOf }
