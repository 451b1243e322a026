'use strict'

// Finds the file a resolved path stands for, as send does: index files for a
// trailing slash, `extensions` for an extensionless name, a directory reported as
// such (the caller redirects or refuses). Only what is a regular file by name is
// opened, and the open (./open-confined) proves it again on the descriptor,
// non-blocking: the name may name a FIFO or a device by then, which would park a
// thread-pool thread in open(2) or never end. No thread-pool hop: see ./stat.

const path = require('node:path')
const { HttpError, lookupError } = require('./http-error')
const { statOrNothing } = require('./stat')

const DIRECTORY = Symbol('directory')

function firstFile (candidates) {
  let failure
  for (const candidate of candidates) {
    try {
      const stat = statOrNothing(candidate)
      if (stat !== undefined && stat.isFile()) return { path: candidate, stat }
    } catch (err) {
      failure = err
    }
  }
  throw failure ? lookupError(failure) : new HttpError(404)
}

// → { path, stat } for a file, or DIRECTORY; throws an HttpError otherwise.
function locateFile ({ path: file, trailingSlash }, { index, extensions }) {
  if (trailingSlash && index.length > 0) {
    return firstFile(index.map((name) => path.join(file, name)))
  }
  let stat
  try {
    stat = statOrNothing(file)
  } catch (err) {
    throw lookupError(err)
  }
  if (stat === undefined) {
    if (trailingSlash || path.extname(file) !== '' || extensions.length === 0) throw new HttpError(404)
    return firstFile(extensions.map((extension) => `${file}.${extension}`))
  }
  if (stat.isDirectory()) return DIRECTORY
  if (trailingSlash || !stat.isFile()) throw new HttpError(404)
  return { path: file, stat }
}

module.exports = { DIRECTORY, locateFile }
