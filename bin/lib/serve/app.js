'use strict'

// What zcopy serve does with one request: CORS, then serveStatic; when that
// finds nothing, a folder listing (--listing), the app's index.html
// (--single), or a 404 (the folder's 404.html when it has one).

const path = require('node:path')
const { splitUrl } = require('../../../lib/http')
const { hostCheck } = require('./allowed-hosts')
const { applyCors } = require('./cors')
const { cacheOptions } = require('./cache-control')
const { sendListing } = require('./listing')
const { sendNotFound, sendStatus, sendText } = require('./not-found')

// Where the app's compressed variants go, for the start line: not always the
// default folder (<tmpdir>/zcopy-variants-<uid>): one that is another user's,
// a link or open to others is never written into, a fresh private one is made
// instead; where none can be made, only variants of up to 64 KiB are kept (in
// memory). → Promise of { made: true, base } (the base folder the store's own
// is in) or { made: false }.
function variantsFolder (serve) {
  return serve.compressedFolder().then((dir) => dir === null ? { made: false } : { made: true, base: path.dirname(dir) })
}

const LISTING_HINT = 'No index.html here: start zcopy serve with --listing to list folders.\n'

function statusOf (err) {
  return err.status || err.statusCode || 500
}

// A path whose last segment has a '.' asks for an asset (or a dotfile): with
// --single it still gets a 404, not the app.
function asksForAsset (pathname) {
  return path.posix.basename(pathname).includes('.')
}

// → { handle(req, res), close(), variantsFolder }. `onRequest(req, res)` runs
// first (the access log); `onSent` and `onReplayable` (the native lane's, or
// null) are serveStatic's. `variantsFolder`: with compression, the promise of
// where its variants go (see variantsFolder()); otherwise null.
function createApp (zcopy, root, config, { onRequest, onSent, onReplayable = null }) {
  const hostAllowed = hostCheck(config.host, config.allowedHosts)
  // fallthrough off: a refusal (403 for --dotfiles deny, 400) reaches fail()
  // with its status instead of becoming a 404.
  const serve = zcopy.serveStatic(root, {
    fallthrough: false,
    ...cacheOptions(config),
    dotfiles: config.dotfiles,
    etag: config.etag,
    extensions: config.extensions,
    precompressed: config.precompressed,
    compress: config.compress,
    onSent,
    ...(onReplayable === null ? {} : { onReplayable })
  })

  function notFound (req, res, pathname) {
    if (!config.listing) return noListing(req, res, pathname)
    sendListing(req, res, root, pathname, config.dotfiles).then(
      (sent) => { if (!sent) noListing(req, res, pathname) },
      (err) => fail(req, res, err))
  }

  function noListing (req, res, pathname) {
    if (config.single && !asksForAsset(pathname)) {
      req.url = '/index.html'
      return serve(req, res, (err) => err ? fail(req, res, err) : sendNotFound(req, res, root))
    }
    // A folder without index.html: say how to list it.
    sendNotFound(req, res, root, pathname.endsWith('/') && !config.listing ? LISTING_HINT : '')
  }

  function fail (req, res, err) {
    if (res.headersSent) return res.destroy()
    const status = statusOf(err)
    if (status === 404) return sendNotFound(req, res, root)
    sendStatus(req, res, status)
  }

  function refuseHost (req, res) {
    const host = req.headers[':authority'] ?? req.headers.host
    sendText(req, res, 403, 'text/plain; charset=utf-8',
      `Blocked request: Host '${host}' is not answered here (zcopy serve listens on loopback).\n` +
      `To answer it, start zcopy serve with --allowed-hosts ${host.replace(/:\d+$/, '')}\n`)
  }

  function handle (req, res) {
    onRequest(req, res)
    if (hostAllowed !== null && !hostAllowed(req)) return refuseHost(req, res)
    if (config.cors && applyCors(req, res)) return
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', config.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD')
      return sendStatus(req, res, 405)
    }
    serve(req, res, (err) => err && statusOf(err) !== 404 ? fail(req, res, err) : notServed(req, res))
  }

  // serveStatic found nothing for the path (read as it reads it: of an
  // absolute-form target 'http://host/x', the path); a target without one gets a 404.
  function notServed (req, res) {
    const { pathname } = splitUrl(req.url)
    if (pathname === null) return sendNotFound(req, res, root)
    notFound(req, res, pathname)
  }

  return { handle, close: () => serve.close(), variantsFolder: config.compress ? variantsFolder(serve) : null }
}

module.exports = { createApp }
