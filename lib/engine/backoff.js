'use strict'

// Waiting out EAGAIN on a non-blocking descriptor with timers: 1 ms, doubling up
// to MAX_BACKOFF_MS, rejecting with an AbortError as soon as `signal` aborts.

const { setTimeout: sleep } = require('node:timers/promises')
const { abortError } = require('./errors')

const MAX_BACKOFF_MS = 64

// → the promise of the wait, and the next delay.
function backoff (delay, signal) {
  return sleep(delay, undefined, signal ? { signal } : undefined).catch(() => { throw abortError(signal) })
}

function nextDelay (delay) {
  return Math.min(delay * 2, MAX_BACKOFF_MS)
}

module.exports = { backoff, nextDelay }
