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

const { normalizeOptions } = require('./options')
const { buildStack } = require('./stack')
const { promiseOf } = require('../common')
const { waitForTurn } = require('../delivery')
const { ANSWERED_IN_CALL } = require('./serve-file')
const { StaticHandler } = require('./static-handler')

function methodNotAllowed (res) {
  res.statusCode = 405
  res.setHeader('Allow', 'GET, HEAD')
  res.setHeader('Content-Length', '0')
  res.end()
}

// The options (undefined and null mean the defaults) are normalizeOptions()'s
// (./options.js), the collaborators ./stack.js's.
// `directories` (for the adapters): 'redirect' (serve-static's: /dir → 301
// /dir/, unless the redirect option is false) or 'index' (koa-static's `format`:
// /dir is answered with /dir/'s index, as if the slash were there).
// `exactSpelling` (zcopy/fastify's, as @fastify/static): a request path is served
// only as spelled on disk, not through a case-folding alias (see ./target); one
// that is not is not found (the adapter answers 403). `delivery`: how a file's
// answer leaves, when not through the response object itself (see serve-file.js).
function createStaticHandler (root, givenOptions, { directories = 'redirect', exactSpelling = false, delivery } = {}) {
  if (!root) throw new TypeError('root path required')
  if (typeof root !== 'string') throw new TypeError('root path must be a string')
  const options = normalizeOptions(givenOptions, root)
  return new StaticHandler(options, buildStack(options, delivery), { directories, exactSpelling })
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
