'use strict'

// The steps sendFile and serveStatic share once a request path is resolved:
// open the located file (or its precompressed sibling) through the open-file
// cache, which admits only a regular file proven beneath the root on its opened
// descriptor (see ./open-confined), then answer: headers, conditionals, range,
// body. Headers and bytes come from that descriptor and its fstat.
//
// A FileServer owns what every one of those steps reads: the normalized options,
// the open-file cache and the scope its files are opened in (the confined root).

const { memoryBody, UNCONFINED } = require('../files')
const { BODY, ContentTags, isConditional, negotiateEncoding, notModified, preconditionFailed, removeContentHeaders, selectRange, setContentLength, setFileHeaders, siblingNames, siblingsOf } = require('../representation')
const { httpError, isHttpError, lookupError } = require('../common')
const { copiesBody, sendBody, sendBytes } = require('../delivery')
const { andThen, isLater } = require('./now-or-later')
const { offerReplay } = require('./replay-offer')

// What serve() returns when it answered in the call: nothing left to wait for.
const ANSWERED_IN_CALL = Promise.resolve()

// A refusal passes as it is; a file-system error gets its status.
function openError (err) {
  throw isHttpError(err) ? err : lookupError(err)
}

// No sibling to send, and nothing that varies with Accept-Encoding.
const IDENTITY = Object.freeze({ sibling: null, vary: false })
// The file itself, for a path whose answer depends on Accept-Encoding.
const VARYING = Object.freeze({ sibling: null, vary: true })

// What onSent hears of a body sent from the memory cache.
function fromMemory (bytes) {
  return { bytes, zeroCopy: false, fromMemory: true, complete: true }
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
  none (req, res, path) { res.end() },
  // The whole body, from memory: Node writes the head and these bytes together,
  // or, over TLS, in pieces (→ Promise of what onSent hears).
  bytes (req, res, path, bytes) { return sendBytes(req, res, bytes) },
  // An inclusive byte range of the open file. → Promise of what onSent hears.
  file (req, res, entry, range, ownEncoding) { return sendBody(req, res, entry.fd, range, { ownEncoding }) }
})

// A body the native lane sends on alone, the response ended (send-body.js):
// a file found shorter than its range drops its entry then, as a transfer
// that fails does. → what onSent hears: `finished`, a Promise of { bytes,
// complete } once the lane is done.
function finishedLater (cache, entry, { bytes, zeroCopy, later }) {
  const finished = later.then(({ bytes, complete, truncated }) => {
    if (truncated) cache.truncated(entry)
    return { bytes, complete }
  })
  return { bytes, zeroCopy, complete: true, finished }
}

// `err` (412, 416) is answered without the file's body: the Content-Encoding
// of a sibling or variant set for it does not describe the error's body.
function bodyless (res, encoding, err) {
  if (encoding !== null) res.removeHeader('Content-Encoding')
  return err
}

// What `file` (see openFile()) sends, for If-Range.
function bodyKind (file) {
  if (file.variant !== undefined) return BODY.VARIANT
  return file.encoding === null ? BODY.FILE : BODY.SIBLING
}

class FileServer {
  // `options`: normalizeOptions()'s; `cache`: the OpenFileCache its files are
  // opened through; `variants`: the VariantStore (`compress`), or null;
  // `delivery`: see RESPONSE, its default (all made by ./stack.js).
  constructor (options, { cache, variants = null, delivery = RESPONSE }) {
    this.options = options
    this.cache = cache
    this.variants = variants
    this.delivery = delivery
    this.root = options.root // null: paths are absolute
    this.tags = options.etag === 'content' ? new ContentTags(cache) : null
    // The root files are confined to: none when there is no root or symlinks out
    // of it are allowed.
    this.confinedTo = options.root === null || options.allowSymlinksOutsideRoot ? null : options.root
    this.confined = cache.scope(this.confinedTo)
    // How a miss looks up a name it then opens, for locateFile(): the name's stat
    // and the open in one pool round trip where the scope can (the file is then in
    // the cache, see OpenFileCache.statToOpen()).
    this.lookUp = (file) => cache.statToOpen(file, this.scope())
  }

  // The cache scope a request's file is opened in (see OpenFileCache.scope()):
  // the one made at construction while the cache keeps it (it closes its roots on
  // clear(), and the oldest beyond its bound), then the cache's new one.
  scope () {
    if (this.confined.closed) this.confined = this.cache.scope(this.confinedTo)
    return this.confined
  }

  // The scope `located` is opened in: a root that is a file (serve-static mounted
  // on one file) is served itself, as the app named it, with nothing to confine it to.
  scopeOf (located) {
    return located.path === this.root ? UNCONFINED : this.scope()
  }

  // Refuses (404), as if it did not exist, a directory about to be redirected to that
  // is not beneath the root (reached through a symbolic link out of it), unless the
  // options allow it. Proven on an opened descriptor of the directory, like files.
  // → Promise; rejects with the refusal.
  checkDirectoryConfinement (directory) {
    const scope = this.scope()
    return scope.checkDirectory === undefined ? Promise.resolve() : scope.checkDirectory(directory)
  }

  // The precompressed siblings of `located`: a promise of them, looked up by stat;
  // for a file the cache remembers (watched), kept with its entry, whose guard on
  // both sibling names (set before the stats run) drops it, siblings and all, on
  // any change of either, as a change of the file itself does.
  siblingsFor (located) {
    const { paths } = this.cache
    const kept = paths.siblingsOf(located) // kept, or being looked up, for a remembered entry
    if (kept !== null) return kept
    const lookup = siblingsOf(located.path)
    paths.keepSiblings(located, siblingNames(located.path), lookup)
    return lookup
  }

  // → { entry, bytes, typePath, encoding, vary, copied, variant? }, holding a
  // cache entry (`entry`; or null and `bytes`, a compressed variant kept in
  // memory): pass it to respond(); or
  // a promise of it when the cache has to open the file first. Throws (rejects) with
  // an HttpError when the file cannot be served (404: gone, not a regular file, or
  // not beneath the root).
  openFile (req, located) {
    const precompressed = this.options.precompressed
    // A root that is a file has no precompressed siblings (see scopeOf()).
    if (!precompressed || located.path === this.root) return this.openTarget(req, located, IDENTITY)
    const siblings = this.siblingsFor(located)
    if (isLater(siblings)) return siblings.then((found) => this.openTarget(req, located, negotiateEncoding(req, found, precompressed)))
    return this.openTarget(req, located, negotiateEncoding(req, siblings, precompressed))
  }

  openTarget (req, located, negotiated) {
    // A file with precompressed siblings is sent as they decide; one without may
    // have compressed variants (./compress/store.js).
    if (this.variants !== null && negotiated.sibling === null && !negotiated.vary && !located.encoding) {
      return this.openCompressed(req, located)
    }
    return this.openPlain(req, located, negotiated)
  }

  // The file or its compressed variant, as the store chooses; when it has none yet
  // for the coding the request prefers, the file itself, and that variant is
  // queued to be made from the file's open entry.
  openCompressed (req, located) {
    const { cache } = this
    const store = this.variants
    const scope = this.scopeOf(located)
    const { variant, vary, wanted, pending } = store.choose(req, located, located.path, scope.proof)
    // The file itself, marked `variantPending` when the coding the client
    // prefers is being made (already, or queued now), or `provisional` when it
    // is wanted but could not be queued (a later request may get it).
    const plain = (making = wanted) => {
      const opened = this.openPlain(req, located, vary ? VARYING : IDENTITY)
      const mark = (file) => {
        if (making === null ? pending : store.want(file.entry, making)) return { ...file, variantPending: true }
        return making === null ? file : { ...file, provisional: true }
      }
      return andThen(opened, mark)
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
    const provisional = wanted !== null // a better coding may come
    const withVariant = (entry, bytes = null) => ({ entry, bytes, typePath: located.path, encoding: variant.encoding, vary: true, copied, variant, provisional })
    // One in memory is its own body, no cache entry.
    if (variant.body !== null) return withVariant(null, variant.body)
    const entry = cache.take(variant.path, variant.stat, UNCONFINED, copied)
    if (entry !== null) return withVariant(entry)
    // Its file removed meanwhile (by hand, a cleaner of /tmp): the file
    // itself, and the variant made again.
    return cache.acquire(variant.path, variant.stat, UNCONFINED, copied).then(withVariant, () => {
      store.lost(variant)
      return plain(variant.encoding)
    })
  }

  openPlain (req, located, { sibling, vary }) {
    const { cache } = this
    const target = sibling || located
    cache.clearOnClose(req.socket && req.socket.server)
    const encoding = sibling ? sibling.encoding : located.encoding || null
    const scope = this.scopeOf(located)
    const copied = copiesBody(req) // then a bigger file is kept in memory once hot
    const entry = cache.take(target.path, target.stat, scope, copied)
    if (entry !== null) return { entry, bytes: null, typePath: located.path, encoding, vary, copied }
    return cache.acquire(target.path, target.stat, scope, copied).then(
      (opened) => ({ entry: opened, bytes: null, typePath: located.path, encoding, vary, copied }),
      // A sibling that cannot be sent (refused: out of the root, not a regular
      // file; gone since it was looked up) is no sibling: the file itself is.
      sibling === null ? openError : () => this.openPlain(req, located, VARYING))
  }

  // → Promise of the cache's entry for the located file itself, opened in the scope
  // openFile() would use, held: release() it. For remembering a path answered with a
  // precompressed sibling (see serve-static.js).
  openLocated (located) {
    return this.cache.acquire(located.path, located.stat, this.scope())
  }

  // Opens the located file and answers the request with it: → Promise; throws or
  // rejects as openFile() does, rejects as respond() does. `onFound(entry)` runs
  // once the file is open and confirmed (`entry`: the cache entry sent, null for
  // a compressed variant from memory). When the cache has the file open, everything up to
  // the transfer runs in this call, without a promise in between.
  serve (req, res, located, onFound = null) {
    const opened = this.openFile(req, located)
    if (isLater(opened)) return opened.then((file) => this.found(req, res, file, onFound, located))
    return this.found(req, res, opened, onFound, located)
  }

  found (req, res, file, onFound, located) {
    if (onFound !== null) onFound(file.entry)
    if (this.tags === null) return this.respond(req, res, file, located)
    // etag 'content': the answer waits for the content ETag (the first
    // request of a file version), never sending another, so replicas agree.
    const tag = this.contentTag(file, located)
    if (!isLater(tag)) {
      file.tag = tag
      return this.respond(req, res, file, located)
    }
    return tag.then((tag) => {
      file.tag = tag
      return this.respond(req, res, file, located)
    }, (err) => {
      this.release(file)
      throw err
    })
  }

  // → the content ETag of what `file` sends (see ./representation/content-tag.js),
  // or a Promise of it. A variant's is derived from its source's, `located`.
  contentTag (file, located) {
    if (file.variant === undefined) return this.tags.of(file.entry)
    const scope = this.scopeOf(located)
    return this.tags.ofVariant(file.variant, () => this.cache.take(located.path, located.stat, scope) ||
      this.cache.acquire(located.path, located.stat, scope).catch(openError))
  }

  // Answers the request with the opened file and releases it. Rejects with an
  // HttpError for 412 and 416 (nothing sent yet), or with the transfer's error when
  // the body failed midway (the response is then destroyed). An answer with no body
  // to wait for (HEAD, 304, a body from memory) settles in this call: the
  // promise returned is then ANSWERED_IN_CALL. So does one whose body an adapter's
  // delivery took (see RESPONSE): the file is released once that body is done, and
  // a failure then goes to the delivery.
  respond (req, res, file, located) {
    const { cache, delivery } = this
    let sent
    try {
      sent = this.writeHeadAndBody(req, res, file)
    } catch (err) {
      this.release(file)
      return Promise.reject(err)
    }
    if (!isLater(sent)) {
      try {
        offerReplay(this, req, res, file, { sent, located })
        this.releaseAfterBody(res, sent, file)
      } catch (err) {
        return Promise.reject(err) // the application's onSent threw
      }
      return ANSWERED_IN_CALL
    }
    const done = sent.then((sent) => {
      offerReplay(this, req, res, file, { sent, located })
      return this.releaseAfterBody(res, sent, file)
    }, (err) => {
      if (err.code === 'ERR_ZCOPY_TRUNCATED') cache.truncated(file.entry)
      this.release(file)
      throw err
    })
    if (!delivery.handsOver) return done
    done.catch((err) => delivery.failed(req, res, err))
    return ANSWERED_IN_CALL
  }

  // The cache entry `file` holds, let go (a body from memory holds none).
  release (file) {
    if (file.entry !== null) this.cache.release(file.entry)
  }

  // The body is sent: `file` is released, and the application's onSent hears
  // `sent` (see sendBody), unless it is null (there was no body); with
  // `variantPending: true` when the file itself went because its compressed
  // variant was being made. A body the native lane sends on alone is sent as
  // far as Node's response goes: its `finished` says the rest.
  releaseAfterBody (res, sent, file) {
    this.release(file)
    if (sent === null) return
    const report = sent.later === undefined ? sent : finishedLater(this.cache, file.entry, sent)
    if (this.options.onSent) this.options.onSent(res, file.variantPending ? { ...report, variantPending: true } : report)
  }

  // Status and headers, then the body: the promise of its delivery; what was sent
  // from memory; or null when there is no body (HEAD, 304, an empty range).
  writeHeadAndBody (req, res, file) {
    const { entry, typePath, encoding, vary, copied, variant, tag } = file
    const { options, delivery } = this
    if (res.headersSent) throw httpError(500, new Error('Can\'t set headers after they are sent.'))
    // A variant's entry has its own stat: setHeaders hears the file's (the
    // version the variant was made from, the one the request found).
    const sourceStat = variant === undefined ? null : variant.record.stat
    const values = variant === undefined ? null : variant.headers
    const present = setFileHeaders(res, { file: entry, typePath, encoding, vary, sourceStat, values, tag }, options)
    const path = entry === null ? variant.name : entry.path
    if (isConditional(req)) {
      if (preconditionFailed(req, res)) throw bodyless(res, encoding, httpError(412))
      if (notModified(req, res)) {
        removeContentHeaders(res)
        res.statusCode = 304
        delivery.none(req, res, path)
        return null
      }
    }
    const size = entry === null ? file.bytes.length : entry.stat.size
    let range
    try {
      range = selectRange(req, res, size, options.acceptRanges, bodyKind(file))
    } catch (err) {
      throw bodyless(res, encoding, err)
    }
    const length = range.end - range.start + 1
    setContentLength(res, present, length)
    if (req.method === 'HEAD' || length === 0) {
      delivery.none(req, res, path)
      return null
    }
    if (variant !== undefined) this.variants.sent(variant, length === size)
    else if (file.variantPending) this.variants.sentWhilePending()
    const body = entry === null ? file.bytes : memoryBody(entry, copied)
    if (body !== null) {
      const sent = delivery.bytes(req, res, path, length === size ? body : body.subarray(range.start, range.end + 1))
      return sent ?? fromMemory(length)
    }
    return delivery.file(req, res, entry, range, encoding !== null)
  }
}

module.exports = { ANSWERED_IN_CALL, FileServer }
