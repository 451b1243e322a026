'use strict'

// The steps sendFile and serveStatic share once a request path is resolved:
// open the located file (or its precompressed sibling) through the open-file
// cache, check it is really inside the root, then answer: headers, conditionals,
// range, body.

const fs = require('node:fs')
const path = require('node:path')
const { removeContentHeaders, setContentLength, setFileHeaders } = require('./headers')
const { HttpError, lookupError } = require('./http-error')
const { precompressedSibling } = require('./precompressed')
const { isConditional, notModified, preconditionFailed } = require('./preconditions')
const { promiseOf } = require('./promise-of')
const { selectRange } = require('./range')
const { sendBody } = require('./send-body')

const NO_BODY = Promise.resolve()
const realRoots = new Map() // root → its real path, once it exists

function realRootOf (root) {
  let real = realRoots.get(root)
  if (real === undefined) {
    try {
      real = fs.realpathSync.native(root)
      realRoots.set(root, real)
    } catch {
      return root // nothing below a missing root can be opened anyway
    }
  }
  return real
}

function isInside (file, root) {
  if (file === null) return false
  return file === root || file.startsWith(root.endsWith(path.sep) ? root : root + path.sep)
}

// Refuses, as if it did not exist, anything reached through a symbolic link that
// leads out of the root, unless the options allow it. `realPath` null: unknown.
function checkConfinement (realPath, options) {
  if (options.root === null || options.allowSymlinksOutsideRoot) return
  if (!isInside(realPath, realRootOf(options.root))) throw new HttpError(404)
}

// The same check for a directory about to be redirected to (a rare answer, so a
// synchronous realpath is fine): a link out of the root is not even confirmed.
function checkDirectoryConfinement (directory, options) {
  let realPath = null
  try {
    realPath = fs.realpathSync.native(directory)
  } catch {
    // gone or unreadable: unverifiable, so refused
  }
  checkConfinement(realPath, options)
}

// → { entry, typePath, encoding }, holding a cache entry: pass it to respond(); or
// a promise of it when the cache has to open the file first. Throws (rejects) with
// an HttpError when the file cannot be served (404: gone, or outside root).
function openFile (req, located, options, cache) {
  const sibling = options.precompressed ? precompressedSibling(req, located.path) : null
  const target = sibling || located
  cache.clearOnClose(req.socket && req.socket.server)
  const encoding = sibling ? sibling.encoding : null
  const entry = cache.take(target.path, target.stat)
  if (entry !== null) return checkOpened(entry, located.path, encoding, options, cache)
  return cache.acquire(target.path, target.stat).then(
    (opened) => checkOpened(opened, located.path, encoding, options, cache),
    (err) => { throw lookupError(err) })
}

function checkOpened (entry, typePath, encoding, options, cache) {
  try {
    if (!entry.stat.isFile()) throw new HttpError(404)
    checkConfinement(entry.realPath, options)
  } catch (err) {
    cache.release(entry)
    throw err
  }
  return { entry, typePath, encoding }
}

// Opens the located file and answers the request with it: → Promise; throws or
// rejects as openFile() does, rejects as respond() does. `onFound` runs once the
// file is open and confirmed. When the cache has the file open, everything up to
// the transfer runs in this call, without a promise in between.
function serveFile (req, res, located, options, cache, onFound = null) {
  const opened = openFile(req, located, options, cache)
  if (opened instanceof Promise) return opened.then((file) => found(req, res, file, options, cache, onFound))
  return found(req, res, opened, options, cache, onFound)
}

function found (req, res, file, options, cache, onFound) {
  if (onFound !== null) onFound()
  return respond(req, res, file, options, cache)
}

// Answers the request with the opened file and releases it. Rejects with an
// HttpError for 412 and 416 (nothing sent yet), or with the transfer's error when
// the body failed midway (the response is then destroyed).
function respond (req, res, { entry, typePath, encoding }, options, cache) {
  return promiseOf(() => answer(req, res, entry, typePath, encoding, options)).then((sent) => {
    cache.release(entry)
    if (sent && options.onSent) options.onSent(res, sent)
  }, (err) => {
    cache.release(entry)
    throw err
  })
}

// Status and headers, then the body: the promise of sendBody, or of nothing when
// there is no body (HEAD, 304, an empty range).
function answer (req, res, entry, typePath, encoding, options) {
  if (res.headersSent) throw new HttpError(500, { cause: new Error('Can\'t set headers after they are sent.') })
  setFileHeaders(res, { file: entry, typePath, encoding }, options)
  if (isConditional(req)) {
    if (preconditionFailed(req, res)) throw new HttpError(412)
    if (notModified(req, res)) {
      removeContentHeaders(res)
      res.statusCode = 304
      res.end()
      return NO_BODY
    }
  }
  const range = selectRange(req, res, entry.stat.size, options.acceptRanges)
  const length = range.end - range.start + 1
  setContentLength(res, length)
  if (req.method === 'HEAD' || length === 0) {
    res.end()
    return NO_BODY
  }
  return sendBody(req, res, entry.handle.fd, range, { ownEncoding: encoding !== null })
}

module.exports = { checkDirectoryConfinement, serveFile }
