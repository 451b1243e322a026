'use strict'

// Finds the file a resolved path stands for, as send does: index files for a
// trailing slash, `extensions` for an extensionless name, a directory reported as
// such (the caller redirects or refuses). Only what is a regular file by name is
// opened, and the open (./open-confined) proves it again on the descriptor,
// non-blocking: the name may name a FIFO or a device by then, which would park a
// thread-pool thread in open(2) or never end. The stats run on the thread pool
// (see ./stat; a miss's may open the file in the same round trip, see
// OpenFileCache.statToOpen()); a remembered path skips all of this.

const path = require('node:path')
const { httpError, lookupError } = require('../common')
const { statOf } = require('../files')

const DIRECTORY = Symbol('directory')

// The first candidate that is a regular file; otherwise, as send's index and
// extensions loops, the 404 (or 500) of the last candidate's stat error, a plain
// 404 when the last one is a directory or some other non-file.
async function firstFile (candidates, stat) {
  let failure
  for (const candidate of candidates) {
    failure = undefined
    try {
      const found = await stat(candidate)
      if (found.isFile()) return { path: candidate, stat: found }
    } catch (err) {
      failure = err
    }
  }
  throw failure === undefined ? httpError(404) : lookupError(failure)
}

// → Promise of { path, stat } for a file, or of DIRECTORY; rejects with the error
// send would give otherwise (see ./http-error). `stat(name)`: how a name is
// looked up, fs.stat's promise or one that gives the same for a regular file
// (for anything else, its isFile() and isDirectory() are all that is asked).
async function locateFile ({ path: file, trailingSlash }, { index, extensions }, stat = statOf) {
  if (trailingSlash && index.length > 0) {
    return firstFile(index.map((name) => path.join(file, name)), stat)
  }
  // send: a path ending with a slash once decoded ('/dir%2f') is not a directory
  // request, but gets no extensions and is never a file.
  const endsWithSeparator = trailingSlash || file.endsWith(path.sep)
  let found
  try {
    found = await stat(file)
  } catch (err) {
    if (err.code !== 'ENOENT' || endsWithSeparator || path.extname(file) !== '' || extensions.length === 0) throw lookupError(err)
    return firstFile(extensions.map((extension) => `${file}.${extension}`), stat)
  }
  if (found.isDirectory()) return DIRECTORY
  if (endsWithSeparator || !found.isFile()) throw httpError(404)
  return { path: file, stat: found }
}

module.exports = { DIRECTORY, locateFile }
