'use strict'

// zcopy.serveStatic(root, options): Connect/Express middleware, a drop-in for
// express.static / serve-static: same options, defaults, statuses, headers,
// directory redirects, next() and next(err) rules, with zero-copy bodies.
//
// Built on createStaticHandler(root, options), the core the Koa and Fastify
// adapters (lib/adapters/) share with it: handler.handle(req, res) → Promise of
// true (answered: a file, 304, 412, 416 or a directory redirect) or false (not
// found or refused before a file was chosen, or a method other than GET/HEAD: the
// framework's next / not-found), rejected with an HttpError otherwise (as
// serveStatic gives it to next(err)).

const path = require('node:path')
const { defaultMaxOpenFiles, MemoryBudget, OpenFileCache } = require('./files')
const { VariantStore } = require('./compress')
const { normalizeOptions } = require('./options')
const { promiseOf } = require('./promise-of')
const { waitForTurn } = require('./delivery')
const { ANSWERED_IN_CALL } = require('./serve-file')
const { StaticHandler } = require('./static-handler')

const DEFAULT_MAX_OPEN_FILES = defaultMaxOpenFiles()
const DEFAULT_MEMORY_CACHE = 32 * 1024 * 1024
// inotify watches are a per-user budget (fs.inotify.max_user_watches) that
// editors, bundlers and other servers share: past this many directories, files
// are checked by a stat per request instead.
const DEFAULT_MAX_WATCHES = 1024

function methodNotAllowed (res) {
  res.statusCode = 405
  res.setHeader('Allow', 'GET, HEAD')
  res.setHeader('Content-Length', '0')
  res.end()
}

// 412 and 416 found once the file was chosen, answered as send answers its errors:
// the file's headers cleared, the error's own (416: Content-Range) set, a short
// text body (Koa's and Fastify's default error bodies are text too).
// serveStatic(root), (root, undefined) and (root, null) all mean the defaults.
function optionsOrDefaults (options) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw new TypeError('options must be an object')
  return options
}

// `directories` (for the adapters): 'redirect' (serve-static's: /dir → 301
// /dir/, unless the redirect option is false) or 'index' (koa-static's `format`:
// /dir is answered with /dir/'s index, as if the slash were there).
// `exactSpelling` (zcopy/fastify's, as @fastify/static): a request path is served
// only as spelled on disk, not through a case-folding alias (see ./spelling); one
// that is not is not found (the adapter answers 403). `delivery`: how a file's
// answer leaves, when not through the response object itself (see serve-file.js).
function createStaticHandler (root, givenOptions, { directories = 'redirect', exactSpelling = false, delivery } = {}) {
  if (!root) throw new TypeError('root path required')
  if (typeof root !== 'string') throw new TypeError('root path must be a string')
  const options = optionsOrDefaults(givenOptions)
  const normalized = normalizeOptions({ ...options, root: path.resolve(root) })
  const maxOpenFiles = nonNegative(options, 'maxOpenFiles', DEFAULT_MAX_OPEN_FILES, Number.isInteger)
  const memoryCache = nonNegative(options, 'memoryCache', DEFAULT_MEMORY_CACHE, Number.isSafeInteger)
  const maxWatches = nonNegative(options, 'maxWatches', DEFAULT_MAX_WATCHES, Number.isSafeInteger)
  const memory = new MemoryBudget(memoryCache) // the cache's small files and the variants alike
  const cache = new OpenFileCache({ max: maxOpenFiles, memory, maxWatches })
  // Compressed variants (`compress`), made once per file version: ./compress/store.js.
  // They are made from the open-file cache's descriptors: none without it.
  if (normalized.compress && maxOpenFiles === 0) {
    process.emitWarning('compress needs the open-file cache (maxOpenFiles above 0): files are sent uncompressed', { code: 'ZCOPY_COMPRESS' })
  }
  const variants = normalized.compress && maxOpenFiles > 0 ? new VariantStore(normalized.compress, cache, { memory }) : null
  const opts = delivery === undefined && variants === null ? normalized : Object.freeze({ ...normalized, delivery, variants })
  return new StaticHandler(opts, cache, variants, {
    directories,
    exactSpelling,
    fallthrough: options.fallthrough !== false,
    redirect: options.redirect !== false
  })
}

// options[name], a non-negative number that `isWhole` accepts, or `fallback`.
function nonNegative (options, name, fallback, isWhole) {
  const value = options[name] === undefined ? fallback : options[name]
  if (!isWhole(value) || value < 0) throw new TypeError(`option ${name} must be a non-negative integer`)
  return value
}

function serveStatic (root, options) {
  const handler = createStaticHandler(root, options)
  const { fallthrough } = handler

  function serveStaticMiddleware (req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return fallthrough ? next() : methodNotAllowed(res)
    }
    // Pipelined behind a response still going out: answered after it.
    if (waitForTurn(serveStaticMiddleware, req, res, next)) return
    const state = { found: false }
    const url = req.url
    const answer = promiseOf(() => handler.serve(req, res, url, req.originalUrl || url, () => { state.found = true }))
    if (answer === ANSWERED_IN_CALL) return // answered in the call (the memory cache, HEAD, 304)
    answer.catch((err) => {
      // Not found (or refused) before a file was chosen: the next handler's turn.
      if (fallthrough && !state.found && err.status < 500) next()
      else next(err)
    })
  }

  serveStaticMiddleware.stats = () => handler.stats()
  serveStaticMiddleware.compressed = () => handler.compressed()
  serveStaticMiddleware.compressedFolder = () => handler.compressedFolder()
  serveStaticMiddleware.close = () => handler.close()
  return serveStaticMiddleware
}

module.exports = { createStaticHandler, serveStatic }
