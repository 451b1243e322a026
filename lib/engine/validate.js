'use strict'

// Synchronous argument checks; each throws a TypeError or RangeError with a Node-style code.

const { invalidArgType, outOfRange } = require('./errors')

const INT32_MAX = 2 ** 31 - 1

function validateInteger (name, value, min = 0, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value)
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value)
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value)
  return value
}

function validateFd (name, value) {
  return validateInteger(name, value, 0, INT32_MAX)
}

// A plain options object: not null, not an array (as Node's own validateObject).
function validateObject (name, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidArgType(name, 'of type object', value)
  return value
}

// An AbortSignal, or anything that works as one here: a boolean `aborted` and
// add/removeEventListener (a signal from another realm, say). An object with
// `aborted` alone, or a plain EventTarget, would fail later, asynchronously, where
// nobody can catch it: refused here.
function isAbortSignal (value) {
  if (value instanceof AbortSignal) return true
  return value !== null && typeof value === 'object' && typeof value.aborted === 'boolean' &&
    typeof value.addEventListener === 'function' && typeof value.removeEventListener === 'function'
}

function validateAbortSignal (name, value) {
  if (value !== undefined && !isAbortSignal(value)) {
    throw invalidArgType(name, 'an instance of AbortSignal', value)
  }
  return value
}

function validateOptionalFunction (name, value) {
  if (value !== undefined && typeof value !== 'function') {
    throw invalidArgType(name, 'of type function', value)
  }
  return value
}

module.exports = {
  validateAbortSignal,
  validateFd,
  validateInteger,
  validateObject,
  validateOptionalFunction
}
