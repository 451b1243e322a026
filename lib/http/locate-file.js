'use strict'

// Finds the file a resolved path stands for, as send does: index files for a
// trailing slash, `extensions` for an extensionless name, a directory reported as
// such (the caller redirects or refuses). Only what is a regular file by name is
// opened, and the open (./open-confined) proves it again on the descriptor,
// non-blocking: the name may name a FIFO or a device by then, which would park a
// thread-pool thread in open(2) or never end. No thread-pool hop: see ./stat.

const fs = require('node:fs')
const path = require('node:path')
const { httpError, lookupError, noEntry } = require('./http-error')

const DIRECTORY = Symbol('directory')
const NO_ENTRY = { throwIfNoEntry: false }

// fs.Stats, or undefined for ENOENT (on Node 22 and later for ENOTDIR too: noEntry
// tells them apart); the rest throw the fs error (send's 404 for ENOTDIR carries
// it). Synchronous on purpose: see ./stat.
function statOf (file) {
  return fs.statSync(file, NO_ENTRY)
}

// The first candidate that is a regular file; otherwise, as send's index and
// extensions loops, the 404 (or 500) of the last candidate's stat error, a plain
// 404 when the last one is a directory or some other non-file.
function firstFile (candidates) {
  let failure
  for (const candidate of candidates) {
    failure = undefined
    try {
      const stat = statOf(candidate)
      if (stat === undefined) failure = noEntry(candidate)
      else if (stat.isFile()) return { path: candidate, stat }
    } catch (err) {
      failure = err
    }
  }
  throw failure === undefined ? httpError(404) : lookupError(failure)
}

// → { path, stat } for a file, or DIRECTORY; throws the error send would give
// otherwise (see ./http-error).
function locateFile ({ path: file, trailingSlash }, { index, extensions }) {
  if (trailingSlash && index.length > 0) {
    return firstFile(index.map((name) => path.join(file, name)))
  }
  let stat
  try {
    stat = statOf(file)
  } catch (err) {
    throw lookupError(err)
  }
  // send: a path ending with a slash once decoded ('/dir%2f') is not a directory
  // request, but gets no extensions and is never a file.
  const endsWithSeparator = trailingSlash || file.endsWith(path.sep)
  if (stat === undefined) {
    if (endsWithSeparator || path.extname(file) !== '' || extensions.length === 0) throw lookupError(noEntry(file))
    return firstFile(extensions.map((extension) => `${file}.${extension}`))
  }
  if (stat.isDirectory()) return DIRECTORY
  if (endsWithSeparator || !stat.isFile()) throw httpError(404)
  return { path: file, stat }
}

module.exports = { DIRECTORY, locateFile }
