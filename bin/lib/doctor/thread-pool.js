'use strict'

// libuv's thread-pool size as libuv computes it when the pool starts: atoi() of
// UV_THREADPOOL_SIZE when the variable is set (so '' or 'abc' give 0), 0 taken
// as 1, anything above 1024 (a negative number too: it is unsigned) as 1024;
// 4 when the variable is not set.
const DEFAULT_SIZE = 4
const MAX_SIZE = 1024

function atoi (text) {
  const match = /^\s*([+-]?\d+)/.exec(text)
  return match ? Number(match[1]) : 0
}

function threadPool (env = process.env) {
  const value = env.UV_THREADPOOL_SIZE
  if (value === undefined) return { size: DEFAULT_SIZE, source: 'default' }
  const requested = atoi(value)
  const size = requested === 0 ? 1 : requested < 0 || requested > MAX_SIZE ? MAX_SIZE : requested
  return { size, source: 'UV_THREADPOOL_SIZE' }
}

module.exports = { threadPool }
