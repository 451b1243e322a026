'use strict'

// zcopy/koa: serve(root, options) → Koa middleware, a drop-in for koa-static 5:
// its options and defaults (koa-send's), with zero-copy bodies.
// - GET and HEAD only; other methods go on to `next()`.
// - `defer: false` (default): the file first, a miss goes on to `await next()`;
//   `defer: true`: `await next()` first, then the file only when nothing
//   downstream answered (no body, status still 404).
// - `format: true` (default): a directory asked for without its trailing slash
//   is answered with its index, as koa-send does (no redirect); `format: false`:
//   not found.
// - `hidden: false` (default): dotfiles are not found; `true`: served.
// - `gzip`, `brotli` (default true): a file's .gz / .br sibling is sent to
//   clients that accept it (Vary: Accept-Encoding).
// - `maxage` / `maxAge` (ms), `immutable`, `index` (default 'index.html', false
//   for none), `extensions` (['html'] or ['.html']), `setHeaders(res, path,
//   stats)`; and zcopy's own: etag, lastModified, acceptRanges, cacheControl,
//   dotfiles, maxOpenFiles, memoryCache, maxWatches, onSent, compress.
// - A request path that normalises to another is refused: Koa routers match the
//   raw path, so a path that normalises to a guarded prefix must not be served
//   from below it (see raw-path.js). 400 where koa-send answers 400 (an absolute
//   path after the first slash: '//x', '/\x', raw or encoded), 403 for the
//   others ('.', '..' and empty segments, a backslash, raw or percent-encoded;
//   a '/' or a letter, digit, '-', '.', '_' or '~' percent-encoded).
// - Koa presets the status to 404 before any middleware runs: a file is answered
//   with the status zcopy means (200, 206, 304, 412, 416); on a miss the status
//   is put back as it was.
// - The answer goes through Koa, as koa-static's does (koa/delivery.js):
//   ctx.status, the headers, and ctx.body, a Readable with the file's `path`
//   (a Buffer with it from the memory cache), so that middleware after
//   `await next()` sees it and may replace it (koa-compress). An untouched body
//   is sent by zcopy when Koa answers (sendfile where it can). 412 and 416 are
//   written by zcopy (`ctx.respond = false`).
// - A miss (404 before a file was chosen) goes on (or, with `fallthrough: false`,
//   is thrown); other errors (403, 400, 500) are thrown, so Koa's error handling
//   renders them and emits app 'error', as koa-static does with koa-send's.
// - middleware.close() closes its cached file descriptors (also done when the
//   server closes).

const path = require('node:path')
const { badOption, createStaticHandler, HttpError } = require('../http')
const { KOA_DELIVERY, answering } = require('./koa/delivery')
const { escapesRouted, isNonCanonical } = require('./raw-path')
const KOA_FLAGS = ['defer', 'format', 'hidden', 'gzip', 'brotli']

function validateFlags (options) {
  for (const name of KOA_FLAGS) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw badOption(name, 'a boolean', options[name])
  }
}

// koa-send's extensions: 'html' or '.html'; false for none.
function extensionsOf (extensions) {
  if (extensions === undefined || extensions === false) return extensions
  if (!Array.isArray(extensions) || extensions.some((extension) => typeof extension !== 'string')) {
    throw badOption('extensions', 'an array of strings or false', extensions)
  }
  return extensions.map((extension) => extension.replace(/^\./, ''))
}

// The status refusing a request path that normalises to another, or 0. Decoded
// as koa-send decodes it; where what follows its first slash is an absolute path
// (another slash, a backslash, a drive: 'C:/'), koa-send refuses it with 400. A
// path that does not decode is the handler's 400.
function refusalOf (rawPath) {
  let decoded
  try {
    decoded = decodeURIComponent(rawPath)
  } catch {
    return 0
  }
  if (path.win32.isAbsolute(decoded.replace(/^\//, ''))) return 400
  return isNonCanonical(decoded) || escapesRouted(rawPath) ? 403 : 0
}

// koa-static's options → serveStatic's.
function handlerOptions (options) {
  validateFlags(options)
  const { defer, format, hidden, gzip, brotli, maxage, ...rest } = options
  const precompressed = options.precompressed !== undefined
    ? options.precompressed
    : [...(brotli !== false ? ['br'] : []), ...(gzip !== false ? ['gzip'] : [])]
  return {
    ...rest,
    maxAge: options.maxAge !== undefined ? options.maxAge : maxage,
    dotfiles: options.dotfiles !== undefined ? options.dotfiles : hidden ? 'allow' : 'ignore',
    extensions: extensionsOf(options.extensions),
    precompressed,
    redirect: false
  }
}

function serve (root, givenOptions) {
  if (givenOptions !== undefined && givenOptions !== null && typeof givenOptions !== 'object') throw badOption('', 'an object', givenOptions)
  const options = givenOptions || {}
  const handler = createStaticHandler(root, handlerOptions(options), {
    directories: options.format === false ? 'redirect' : 'index',
    delivery: KOA_DELIVERY
  })
  const fallthrough = handler.fallthrough
  const fallsThrough = (err) => fallthrough && err.status === 404

  // → whether a file (or 304/412/416) answered; throws an HttpError otherwise.
  async function respond (ctx) {
    const refusal = refusalOf(ctx.path)
    if (refusal !== 0) throw new HttpError(refusal)
    const res = ctx.res
    const preset = res.statusCode
    res.statusCode = 200
    const state = answering(ctx)
    let answered
    try {
      answered = await handler.handle(ctx.req, res, { originalUrl: ctx.originalUrl, fallsThrough })
    } catch (err) {
      if (!res.headersSent) res.statusCode = preset
      throw err
    }
    if (!answered) res.statusCode = preset
    else if (!state.handedOver) ctx.respond = false // written by the handler: 412, 416
    return answered
  }

  function servesMethod (ctx) {
    return ctx.method === 'GET' || ctx.method === 'HEAD'
  }

  async function zcopyKoa (ctx, next) {
    if (servesMethod(ctx) && await respond(ctx)) return
    return next()
  }

  async function zcopyKoaDeferred (ctx, next) {
    await next()
    if (!servesMethod(ctx)) return
    // Answered downstream: a body, or a status other than Koa's preset 404.
    if (ctx.body != null || ctx.status !== 404) return
    await respond(ctx)
  }

  const middleware = options.defer ? zcopyKoaDeferred : zcopyKoa
  middleware.stats = () => handler.stats()
  middleware.compressed = () => handler.compressed()
  middleware.compressedFolder = () => handler.compressedFolder()
  middleware.close = () => handler.close()
  return middleware
}

module.exports = serve
module.exports.default = serve
module.exports.serve = serve
