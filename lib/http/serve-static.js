'use strict'

// zcopy.serveStatic(root, options): Connect/Express middleware, a drop-in for
// express.static / serve-static: same options, defaults, statuses, headers,
// directory redirects, next() and next(err) rules, with zero-copy bodies.

const path = require('node:path')
const { OpenFileCache } = require('./file-cache')
const { HttpError } = require('./http-error')
const { DIRECTORY, locateFile } = require('./locate-file')
const { normalizeOptions } = require('./options')
const { promiseOf } = require('./promise-of')
const { redirectToDirectory } = require('./redirect')
const { splitUrl } = require('./request-url')
const { pathResolver } = require('./resolve-path')
const { checkDirectoryConfinement, serveFile } = require('./serve-file')

const DEFAULT_MAX_OPEN_FILES = 128
const DONE = Promise.resolve()

function methodNotAllowed (res) {
  res.statusCode = 405
  res.setHeader('Allow', 'GET, HEAD')
  res.setHeader('Content-Length', '0')
  res.end()
}

function serveStatic (root, options = {}) {
  if (!root) throw new TypeError('root path required')
  if (typeof root !== 'string') throw new TypeError('root path must be a string')
  const opts = normalizeOptions({ ...options, root: path.resolve(root) })
  const fallthrough = options.fallthrough !== false
  const redirect = options.redirect !== false
  const maxOpenFiles = options.maxOpenFiles === undefined ? DEFAULT_MAX_OPEN_FILES : options.maxOpenFiles
  if (!Number.isInteger(maxOpenFiles) || maxOpenFiles < 0) {
    throw new TypeError('option maxOpenFiles must be a non-negative integer')
  }
  const cache = new OpenFileCache({ max: maxOpenFiles })
  const resolve = pathResolver(opts.root, opts.dotfiles)

  // → Promise. Throws (before any file is chosen) or rejects with an HttpError.
  function serve (req, res, state) {
    const originalUrl = req.originalUrl || req.url
    let { pathname } = splitUrl(req.url)
    // Mounted at /static, a request for /static must redirect to /static/.
    if (pathname === '/' && !splitUrl(originalUrl).pathname.endsWith('/')) pathname = ''
    const resolved = resolve(pathname)
    const located = locateFile(resolved, opts)
    if (located === DIRECTORY) {
      if (!redirect || resolved.trailingSlash) throw new HttpError(404)
      checkDirectoryConfinement(resolved.path, opts, cache)
      redirectToDirectory(res, originalUrl)
      return DONE
    }
    return serveFile(req, res, located, opts, cache, () => { state.found = true })
  }

  function serveStaticMiddleware (req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return fallthrough ? next() : methodNotAllowed(res)
    }
    const state = { found: false }
    promiseOf(() => serve(req, res, state)).catch((err) => {
      // Not found (or refused) before a file was chosen: the next handler's turn.
      if (fallthrough && !state.found && err.status < 500) next()
      else next(err)
    })
  }

  // Closes the cached file descriptors and the root directory's (they also close
  // when the server does).
  serveStaticMiddleware.close = () => cache.clear()
  return serveStaticMiddleware
}

module.exports = { serveStatic }
