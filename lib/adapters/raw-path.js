'use strict'

// Fastify and Koa route on the raw request path, without normalising it: a path
// that normalises to another ('/a/../deep/x', '/./deep/x', '//deep/x', a
// backslash), or decodes to another where the router does not decode it first
// ('/%64eep/x' in Koa), could slip past an app's more specific route or guard
// ('/deep/*') and still name a file below it. The adapters refuse such paths
// instead of normalising them.

const path = require('node:path')

// Whether `pathname` (decoded) is not what POSIX normalisation makes of it: '.' or
// '..' segments, empty segments, a backslash (a separator for some). '' is the
// root's own index, asked for internally.
function isNonCanonical (pathname) {
  if (pathname.length === 0) return false
  if (pathname.includes('\\')) return true
  return path.posix.normalize(pathname) !== pathname
}

const ESCAPE = /%([0-9a-f]{2})/gi
// What a route matches literally and no browser escapes: '/', and RFC 3986's
// unreserved characters (letters, digits, '-', '.', '_', '~').
const ROUTED = /[\w.~/-]/

// Whether `rawPath` spells one of those with a percent escape ('/%73ub/x',
// '/sub%2fdeep/x'): decoded, it names a path that a router which matches the raw
// one (Koa's; Fastify's decodes such escapes first) never saw.
function escapesRouted (rawPath) {
  if (!rawPath.includes('%')) return false
  for (const [, hex] of rawPath.matchAll(ESCAPE)) {
    if (ROUTED.test(String.fromCharCode(Number.parseInt(hex, 16)))) return true
  }
  return false
}

module.exports = { escapesRouted, isNonCanonical }
