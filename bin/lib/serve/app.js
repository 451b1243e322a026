'use strict'

// What zcopy serve does with one request: CORS, then serveStatic; when that
// finds nothing, a folder listing (--listing), the app's index.html
// (--single), or a 404 (the folder's 404.html when it has one).

const path = require('node:path')
const { applyCors } = require('./cors')
const { cacheOptions } = require('./cache-control')
const { sendListing } = require('./listing')
const { sendNotFound, sendStatus } = require('./not-found')

function pathnameOf (url) {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

// A path whose last segment has a '.' asks for an asset (or a dotfile): with
// --single it still gets a 404, not the app.
function asksForAsset (pathname) {
  return path.posix.basename(pathname).includes('.')
}

// → { handle(req, res), close() }. `onRequest(req, res)` runs first (the
// access log).
function createApp (zcopy, root, config, onRequest, onSent) {
  const serve = zcopy.serveStatic(root, {
    ...cacheOptions(config),
    dotfiles: config.dotfiles,
    etag: config.etag,
    extensions: config.extensions,
    precompressed: config.precompressed,
    onSent
  })

  function notFound (req, res, pathname) {
    if (config.listing && sendListing(req, res, root, pathname, config.dotfiles)) return
    if (config.single && !asksForAsset(pathname)) {
      req.url = '/index.html'
      return serve(req, res, error => error ? fail(req, res, error) : sendNotFound(req, res, root))
    }
    sendNotFound(req, res, root)
  }

  function fail (req, res, error) {
    if (res.headersSent) return res.destroy()
    const status = error.status || error.statusCode || 500
    if (status === 404) return sendNotFound(req, res, root)
    sendStatus(req, res, status)
  }

  function handle (req, res) {
    onRequest(req, res)
    if (config.cors && applyCors(req, res)) return
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', config.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD')
      return sendStatus(req, res, 405)
    }
    const pathname = pathnameOf(req.url)
    serve(req, res, error => error ? fail(req, res, error) : notFound(req, res, pathname))
  }

  return { handle, close: () => serve.close() }
}

module.exports = { createApp }
