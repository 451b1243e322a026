'use strict'

// The steps sendFile and serveStatic share once a request path is resolved:
// open the located file (or its precompressed sibling) through the open-file
// cache, which admits only a regular file proven beneath the root on its opened
// descriptor (see ./open-confined), then answer: headers, conditionals, range,
// body. Headers and bytes come from that descriptor and its fstat.

const { memoryBody } = require('./file-cache')
const { removeContentHeaders, setContentLength, setFileHeaders } = require('./headers')
const { httpError, isHttpError, lookupError } = require('./http-error')
const { negotiateEncoding, siblingNames, siblingsOf } = require('./precompressed')
const { isConditional, notModified, preconditionFailed } = require('./preconditions')
const { selectRange } = require('./range')
const { copiesBody, sendBody, sendBytes } = require('./send-body')

// What serveFile() returns when it answered in the call: nothing left to wait for.
const ANSWERED = Promise.resolve()

// The cache scope a request's file is opened in: confined to the root, unless
// there is none or symlinks out of it are allowed.
function scopeOf (options, cache) {
  return cache.scope(options.root === null || options.allowSymlinksOutsideRoot ? null : options.root)
}

// → how a miss looks up a name it then opens, for locateFile(): the name's stat
// and the open in one pool round trip where the scope can (the file is then in
// the cache, see OpenFileCache.statToOpen()).
function statToOpen (options, cache) {
  return (file) => cache.statToOpen(file, scopeOf(options, cache))
}

// Refuses (404), as if it did not exist, a directory about to be redirected to that
// is not beneath the root (reached through a symbolic link out of it), unless the
// options allow it. Proven on an opened descriptor of the directory, like files.
// → Promise; rejects with the refusal.
function checkDirectoryConfinement (directory, options, cache) {
  const scope = scopeOf(options, cache)
  return scope.checkDirectory === undefined ? Promise.resolve() : scope.checkDirectory(directory)
}

// A refusal passes as it is; a file-system error gets its status.
function openError (err) {
  throw isHttpError(err) ? err : lookupError(err)
}

// No sibling to send, and nothing that varies with Accept-Encoding.
const IDENTITY = Object.freeze({ sibling: null, vary: false })
// The file itself, for a path whose answer depends on Accept-Encoding.
const VARYING = Object.freeze({ sibling: null, vary: true })

// The precompressed siblings of `located`: a promise of them, looked up by stat;
// for a file the cache remembers (watched), kept with its entry, whose guard on
// both sibling names (set before the stats run) drops it, siblings and all, on
// any change of either, as a change of the file itself does.
function siblingsFor (located, cache) {
  if (located.siblings) return located.siblings // kept, or being looked up, for a remembered entry
  const lookup = siblingsOf(located.path)
  if (located.siblings === null && cache.paths.guard(located, siblingNames(located.path))) {
    located.siblings = lookup
    lookup.then((siblings) => {
      if (located.siblings === lookup) located.siblings = siblings // not dropped meanwhile
    })
  }
  return lookup
}

// → { entry, typePath, encoding, vary }, holding a cache entry: pass it to respond(); or
// a promise of it when the cache has to open the file first. Throws (rejects) with
// an HttpError when the file cannot be served (404: gone, not a regular file, or
// not beneath the root).
function openFile (req, located, options, cache) {
  // A root that is a file (serve-static mounted on one file) is served itself, as
  // the app named it: nothing to confine it to, and no precompressed siblings.
  const isRoot = located.path === options.root
  if (!options.precompressed || isRoot) return openTarget(req, located, IDENTITY, options, cache)
  const siblings = siblingsFor(located, cache)
  if (siblings instanceof Promise) {
    return siblings.then((found) => openTarget(req, located, negotiateEncoding(req, found, options.precompressed), options, cache))
  }
  return openTarget(req, located, negotiateEncoding(req, siblings, options.precompressed), options, cache)
}

function openTarget (req, located, negotiated, options, cache) {
  // A file with precompressed siblings is sent as they decide; one without may
  // have compressed variants (./compress/store.js).
  if (options.variants && negotiated.sibling === null && !negotiated.vary && !located.encoding) {
    return openCompressed(req, located, options, cache)
  }
  return openPlain(req, located, negotiated, options, cache)
}

// The file or its compressed variant, as the store chooses; when it has none yet
// for the coding the request prefers, the file itself, and that variant is
// queued to be made from the file's open entry.
function openCompressed (req, located, options, cache) {
  const store = options.variants
  const scope = located.path === options.root ? cache.scope(null) : scopeOf(options, cache)
  const { variant, vary, wanted } = store.choose(req, located, located.path, scope.proof)
  const plain = () => {
    const opened = openPlain(req, located, vary ? VARYING : IDENTITY, options, cache)
    if (wanted === null) return opened
    if (!(opened instanceof Promise)) {
      store.want(opened.entry, wanted)
      return opened
    }
    return opened.then((file) => {
      store.want(file.entry, wanted)
      return file
    })
  }
  if (variant === null) return plain()
  if (wanted !== null) {
    // A better coding than the one sent is wanted: made from the file's entry,
    // when the cache has it open (a remembered file is its entry).
    const source = cache.take(located.path, located.stat, scope)
    if (source !== null) {
      store.want(source, wanted)
      cache.release(source)
    }
  }
  const copied = copiesBody(req)
  const answer = (entry) => {
    if (entry.headers !== variant.headers) entry.headers = variant.headers
    return { entry, typePath: located.path, encoding: variant.encoding, vary: true, copied, variant }
  }
  if (variant.entry !== null) {
    variant.entry.users++
    return answer(variant.entry)
  }
  const variantScope = cache.scope(null)
  const entry = cache.take(variant.path, variant.stat, variantScope, copied)
  if (entry !== null) return answer(entry)
  // Removed meanwhile (evicted, or by hand): the file itself.
  return cache.acquire(variant.path, variant.stat, variantScope, copied).then(answer, plain)
}

function openPlain (req, located, { sibling, vary }, options, cache) {
  const target = sibling || located
  cache.clearOnClose(req.socket && req.socket.server)
  const encoding = sibling ? sibling.encoding : located.encoding || null
  const scope = located.path === options.root ? cache.scope(null) : scopeOf(options, cache)
  const copied = copiesBody(req) // then a bigger file is kept in memory once hot
  const entry = cache.take(target.path, target.stat, scope, copied)
  if (entry !== null) return { entry, typePath: located.path, encoding, vary, copied }
  return cache.acquire(target.path, target.stat, scope, copied).then(
    (opened) => ({ entry: opened, typePath: located.path, encoding, vary, copied }),
    openError)
}

// → Promise of the cache's entry for the located file itself, opened in the scope
// openFile() would use, held: release() it. For remembering a path answered with a
// precompressed sibling (see serve-static.js).
function openLocated (located, options, cache) {
  return cache.acquire(located.path, located.stat, scopeOf(options, cache))
}

// Opens the located file and answers the request with it: → Promise; throws or
// rejects as openFile() does, rejects as respond() does. `onFound(entry)` runs
// once the file is open and confirmed. When the cache has the file open, everything up to
// the transfer runs in this call, without a promise in between.
function serveFile (req, res, located, options, cache, onFound = null) {
  const opened = openFile(req, located, options, cache)
  if (opened instanceof Promise) return opened.then((file) => found(req, res, file, options, cache, onFound))
  return found(req, res, opened, options, cache, onFound)
}

// What onSent hears of a body sent from the memory cache.
function fromMemory (bytes) {
  return { bytes, zeroCopy: false, fromMemory: true, complete: true }
}

function found (req, res, file, options, cache, onFound) {
  if (onFound !== null) onFound(file.entry)
  return respond(req, res, file, options, cache)
}

// Answers the request with the opened file and releases it. Rejects with an
// HttpError for 412 and 416 (nothing sent yet), or with the transfer's error when
// the body failed midway (the response is then destroyed). An answer with no body
// to wait for (HEAD, 304, a body from memory) settles in this call: the
// promise returned is then ANSWERED. So does one whose body an adapter's delivery
// took (see RESPONSE below): the file is released once that body is done, and a
// failure then goes to the delivery.
function respond (req, res, file, options, cache) {
  const { entry } = file
  const delivery = deliveryOf(options)
  let sent
  try {
    sent = answer(req, res, file, options, delivery)
  } catch (err) {
    cache.release(entry)
    return Promise.reject(err)
  }
  if (!(sent instanceof Promise)) {
    try {
      answered(res, sent, options, cache, entry)
    } catch (err) {
      return Promise.reject(err) // the application's onSent threw
    }
    return ANSWERED
  }
  const done = sent.then((sent) => answered(res, sent, options, cache, entry), (err) => {
    cache.release(entry)
    throw err
  })
  if (!delivery.handsOver) return done
  done.catch((err) => delivery.failed(req, res, err))
  return ANSWERED
}

// `sent`: what the body was (see sendBody), or null when there was none.
function answered (res, sent, options, cache, entry) {
  cache.release(entry)
  if (sent !== null && options.onSent) options.onSent(res, sent)
}

// How an answer leaves once its status and headers are on `res`: by default
// through Node's response object itself (serveStatic, sendFile, zcopy serve).
// An adapter may pass its own as the handler's `delivery`, which hands the
// answer to its framework instead, whose hooks or middleware then see the body
// (adapters/fastify/reply.js, adapters/koa/delivery.js): `handsOver` true,
// `file()` returns at once a promise of what onSent hears (a FileBody's
// `done`), and `failed(req, res, err)` hears a body that failed midway.
const RESPONSE = Object.freeze({
  handsOver: false,
  // No body: HEAD, 304, an empty range.
  none (req, res, entry) { res.end() },
  // The whole body, from memory: Node writes the head and these bytes together,
  // or, over TLS, in pieces (→ Promise of what onSent hears).
  bytes (req, res, entry, bytes) { return sendBytes(req, res, bytes) },
  // An inclusive byte range of the open file. → Promise of what onSent hears.
  file (req, res, entry, range, ownEncoding) { return sendBody(req, res, entry.fd, range, { ownEncoding }) }
})

function deliveryOf (options) {
  return options.delivery || RESPONSE
}

// `err` (412, 416) is answered without the file's body: the Content-Encoding
// of a sibling or variant set for it does not describe the error's body.
function bodyless (res, encoding, err) {
  if (encoding !== null) res.removeHeader('Content-Encoding')
  return err
}

// Status and headers, then the body: the promise of its delivery; what was sent
// from memory; or null when there is no body (HEAD, 304, an empty range).
function answer (req, res, file, options, delivery) {
  const { entry, typePath, encoding, vary, copied } = file
  if (res.headersSent) throw httpError(500, new Error('Can\'t set headers after they are sent.'))
  const present = setFileHeaders(res, { file: entry, typePath, encoding, vary }, options)
  if (isConditional(req)) {
    if (preconditionFailed(req, res)) throw bodyless(res, encoding, httpError(412))
    if (notModified(req, res)) {
      removeContentHeaders(res)
      res.statusCode = 304
      delivery.none(req, res, entry)
      return null
    }
  }
  const size = entry.stat.size
  let range
  try {
    range = selectRange(req, res, size, options.acceptRanges)
  } catch (err) {
    throw bodyless(res, encoding, err)
  }
  const length = range.end - range.start + 1
  setContentLength(res, present, length)
  if (req.method === 'HEAD' || length === 0) {
    delivery.none(req, res, entry)
    return null
  }
  if (file.variant !== undefined) options.variants.sent(file.variant, length === size)
  const body = memoryBody(entry, copied)
  if (body !== null) {
    const sent = delivery.bytes(req, res, entry, length === size ? body : body.subarray(range.start, range.end + 1))
    return sent ?? fromMemory(length)
  }
  return delivery.file(req, res, entry, range, encoding !== null)
}

module.exports = { ANSWERED, checkDirectoryConfinement, openLocated, serveFile, statToOpen }
