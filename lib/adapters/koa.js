'use strict'

// zcopy/koa: serve(root, options) → Koa middleware, zcopy.serveStatic's options
// with Koa's conventions, like koa-static:
// - GET and HEAD only; other methods go on to `next()`.
// - Koa presets the status to 404 before any middleware runs: a file is answered
//   with the status zcopy means (200, 206, 304, 412, 416, 301 for a directory), as
//   koa-static answers with 200. On a miss the status is put back as it was.
// - zcopy writes the response itself; `ctx.respond = false` is set only then, so
//   Koa does not answer a second time.
// - A miss (404 before a file was chosen) goes on to `await next()`; with
//   `fallthrough: false` it is thrown instead. Other errors (403 for
//   `dotfiles: 'deny'`, 400, 500) are thrown, so Koa's error handling renders
//   them (err.status, err.expose, err.headers) and emits app 'error', as
//   koa-static does with koa-send's.
// - middleware.close() closes its cached file descriptors (also done when the
//   server closes).

const { createStaticHandler } = require('../http/serve-static')

function serve (root, options) {
  const handler = createStaticHandler(root, options)
  const fallthrough = handler.fallthrough
  const fallsThrough = (err) => fallthrough && err.status === 404

  async function zcopyKoa (ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    const res = ctx.res
    const preset = res.statusCode
    res.statusCode = 200
    let answered
    try {
      answered = await handler.handle(ctx.req, res, { originalUrl: ctx.originalUrl, fallsThrough })
    } catch (err) {
      if (!res.headersSent) res.statusCode = preset
      throw err
    }
    if (answered) {
      ctx.respond = false
      return
    }
    res.statusCode = preset
    return next()
  }

  zcopyKoa.close = handler.close
  return zcopyKoa
}

module.exports = serve
module.exports.default = serve
module.exports.serve = serve
