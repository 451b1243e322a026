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

function validateObject (name, value) {
  if (value === null || typeof value !== 'object') throw invalidArgType(name, 'of type object', value)
  return value
}

function validateAbortSignal (name, value) {
  if (value !== undefined && (value === null || typeof value !== 'object' || !('aborted' in value))) {
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
