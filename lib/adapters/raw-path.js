'use strict'

// Fastify and Koa route on the raw request path, without normalising it: a path
// that normalises to another ('/a/../deep/x', '/./deep/x', '//deep/x', a
// backslash) could slip past an app's more specific route or guard ('/deep/*')
// and still name a file below it. Both adapters refuse such paths instead of
// normalising them.

const path = require('node:path')

// Whether `pathname` (decoded) is not what POSIX normalisation makes of it: '.' or
// '..' segments, empty segments, a backslash (a separator for some). '' is the
// root's own index, asked for internally.
function isNonCanonical (pathname) {
  if (pathname.length === 0) return false
  if (pathname.includes('\\')) return true
  return path.posix.normalize(pathname) !== pathname
}

module.exports = { isNonCanonical }
