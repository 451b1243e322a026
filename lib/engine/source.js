'use strict'

// The file side of a transfer: a path (opened and closed here), or an fd or a
// FileHandle (the caller's: never closed here), with its stat and byte range.

const fsp = require('node:fs/promises')
const { invalidArgType, isDirectoryError } = require('./errors')
const { validateFd } = require('./validate')

// fs.promises.FileHandle is not exported as a class on every supported Node.
function isFileHandle (value) {
  return value !== null && typeof value === 'object' && typeof value.fd === 'number' &&
    typeof value.close === 'function' && value.constructor && value.constructor.name === 'FileHandle'
}

function isPathLike (value) {
  return typeof value === 'string' || Buffer.isBuffer(value) || value instanceof URL
}

function validateSource (source) {
  if (typeof source === 'number') return validateFd('source', source)
  if (isPathLike(source) || isFileHandle(source)) return source
  throw invalidArgType('source', 'a path (string, Buffer or URL), a file descriptor or a FileHandle', source)
}

async function openSource (source) {
  if (typeof source === 'number') return { fd: source, close: async () => {} }
  if (isFileHandle(source)) return { fd: source.fd, close: async () => {} }
  const handle = await fsp.open(source, 'r')
  return { fd: handle.fd, close: () => handle.close() }
}

// [start, start + length) of the file, `end` inclusive and clamped to its size
// as fs.createReadStream does. Non-regular files have no known length.
function byteRange (stats, start, end) {
  if (stats.isDirectory()) throw isDirectoryError('read')
  if (!stats.isFile()) return { start, length: null, regular: false }
  const last = Math.min(end, stats.size - 1)
  return { start, length: Math.max(0, last - start + 1), regular: true }
}

module.exports = { byteRange, isPathLike, openSource, validateSource }
