'use strict'

// The handler serveStatic, zcopy/koa and zcopy/fastify share: a request's URL
// (or a file the caller names) to a file under the root, answered through a
// FileServer (./serve-file). It resolves the path, serves a remembered one
// without a lookup, locates the others, remembers what it found, and answers
// a directory with its index or a redirect. Built by createStaticHandler()
// (./serve-static) from the frozen options (./options.js) and the
// collaborators made of them (./stack.js): the open-file cache, the variant
// store, the delivery.

const path = require('node:path')
const { STATUS_CODES } = require('node:http')
const { HttpError, promiseOf } = require('../common')
const { DIRECTORY, directoryLocation, locateFile, pathResolver, redirectToDirectory, resolvePath, spellingBelow, splitUrl } = require('../target')
const { ANSWERED_IN_CALL, FileServer } = require('./serve-file')

const RESOLVED_PATHS = 1024
const TRUE = () => true
const HANDLED_IN_CALL = Promise.resolve(true) // handle()'s answer when serve() answered in the call
const NOTHING = () => {}

function replaceWithErrorText (res, err) {
  for (const name of res.getHeaderNames()) res.removeHeader(name)
  if (err.headers) for (const name of Object.keys(err.headers)) res.setHeader(name, err.headers[name])
  const body = STATUS_CODES[err.status] || String(err.status)
  res.statusCode = err.status
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

// A request path whose resolved path says what it asks for: a trailing slash in
// both or in neither ('/dir%2f' resolves to a directory's path but is no
// directory request).
function rememberable (resolved) {
  return resolved.trailingSlash === resolved.path.endsWith(path.sep)
}

class StaticHandler {
  // `opts`: the frozen options (normalizeOptions()); `stack`: what
  // buildStack() made of them: the open-file cache (`cache`), the VariantStore
  // (`variants`, or null) and the `delivery`, handed to the FileServer.
  // `directories`: 'redirect' (serve-static's: /dir → 301 /dir/, unless the
  // `redirect` option is false) or 'index' (koa-static's `format`: /dir is
  // answered with /dir/'s index, as if the slash were there). `exactSpelling`
  // (zcopy/fastify's, as @fastify/static): a request path is served only as
  // spelled on disk, not through a case-folding alias (see ./target/spelling.js).
  constructor (opts, stack, { directories, exactSpelling }) {
    const { cache, variants } = stack
    this.options = opts
    this.cache = cache
    this.variants = variants
    this.directories = directories
    this.exactSpelling = exactSpelling
    this.fallthrough = opts.fallthrough
    this.redirect = opts.redirect
    this.files = new FileServer(opts, stack)
    // → Promise of a file's stat, as fs.stat gives it (the same errors), for a
    // caller about to have handle() send it ({ file, stat }): a regular file
    // is opened in the same pool job, into this handler's open-file cache.
    this.lookUp = this.files.lookUp
    this.paths = cache.paths
    // The resolver remembers as many request paths as the cache can hold files, so
    // that a working set the cache holds is resolved once, not on every request.
    this.resolve = pathResolver(this.files.root, opts.dotfiles, Math.max(RESOLVED_PATHS, cache.max))
  }

  // → Promise, or ANSWERED_IN_CALL. Throws (before any file is chosen) or
  // rejects with an HttpError. `url`: the request-target below the mount
  // point; `originalUrl`: the whole one (directory redirects go there).
  // `onFound` runs once, before anything is written: the file is open and
  // confirmed, or a directory redirect follows.
  serve (req, res, url, originalUrl, onFound) {
    let { pathname } = splitUrl(url)
    const original = originalUrl === url ? pathname : splitUrl(originalUrl).pathname
    // No path (asterisk-form '*', a bare name): nothing to serve.
    if (pathname === null || original === null) throw new HttpError(404)
    // Mounted at /static, a request for /static must redirect to /static/.
    if (pathname === '/' && !original.endsWith('/')) pathname = ''
    const resolved = this.resolve(pathname)
    const canRemember = rememberable(resolved)
    const remembered = canRemember ? this.paths.lookup(resolved.path) : null
    if (remembered !== null) return this.files.serve(req, res, remembered, onFound)
    const since = this.paths.lookupTick()
    return locateFile(resolved, this.options, this.lookUp).then((located) =>
      this.serveLocated(req, res, { pathname, resolved, located, originalUrl, canRemember, since }, onFound))
  }

  // The miss path's answer once the lookup found `located` (a file or DIRECTORY),
  // once it is known to be spelled as asked, where that matters (`exactSpelling`).
  serveLocated (req, res, found, onFound) {
    if (!this.exactSpelling) return this.serveFileOrDirectory(req, res, found, onFound)
    const { resolved, located } = found
    const spelled = located === DIRECTORY || resolved.trailingSlash ? resolved.path : located.path
    return spellingBelow(this.files.root, spelled).then((spelling) => {
      if (spelling !== 'exact') throw new HttpError(404)
      return this.serveFileOrDirectory(req, res, found, onFound)
    })
  }

  // A file is served (and its path remembered); a directory gets its index or
  // a redirect, as `directories` says.
  serveFileOrDirectory (req, res, found, onFound) {
    const { resolved, located, canRemember } = found
    if (located === DIRECTORY) return this.serveDirectory(req, res, found, onFound)
    if (!canRemember || located.path === this.files.root) return this.files.serve(req, res, located, onFound)
    // Found by its name's stat: remembered, if watches can vouch for it, so that
    // the next request for it needs none (see RememberedPaths.remember()).
    return this.files.serve(req, res, located, (entry) => {
      this.remember(resolved, located, entry, found.since)
      onFound()
    })
  }

  serveDirectory (req, res, { pathname, resolved, originalUrl }, onFound) {
    if (this.directories === 'index' && !resolved.trailingSlash) {
      return locateFile(this.resolve(pathname + '/'), this.options, this.lookUp).then((index) => {
        if (index === DIRECTORY) throw new HttpError(404)
        return this.files.serve(req, res, index, onFound)
      })
    }
    if (!this.redirect || resolved.trailingSlash) throw new HttpError(404)
    // A redirect that a browser would take to another host is not sent.
    const location = directoryLocation(originalUrl)
    if (location === null) throw new HttpError(404)
    return this.files.checkDirectoryConfinement(resolved.path).then(() => {
      onFound()
      redirectToDirectory(res, location)
    })
  }

  // Remembers that `resolved` names `located`, sent as `entry` (null: a
  // compressed variant from memory); its lookup began at `since`
  // (paths.lookupTick()). When that was a precompressed sibling or a variant, the
  // file itself is opened to be remembered (unless it is known that it cannot
  // be): a later request negotiates from it without a stat.
  remember (resolved, located, entry, since) {
    if (entry !== null && entry.path === located.path) {
      this.rememberAs(entry, resolved, located, since)
      return
    }
    if (!this.paths.mayRemember(located.path)) return
    this.files.openLocated(located).then((file) => {
      this.rememberAs(file, resolved, located, since).then(() => this.cache.release(file))
    }, NOTHING)
  }

  // RememberedPaths' two steps: watches set, then `resolved` looked up again
  // unless nothing was heard since the first lookup. → Promise, never rejected.
  async rememberAs (entry, resolved, located, since) {
    const remembering = await this.paths.remember(entry, { key: resolved.path, root: this.files.root, found: located, since })
    if (remembering === null) return
    const again = remembering.lookedUp ? null : await this.locateAgain(resolved)
    this.paths.finish(remembering, again)
  }

  // → Promise of what `resolved` names now ({ path, stat }), or null: a
  // directory, or the lookup failed.
  locateAgain (resolved) {
    return locateFile(resolved, this.options).then((located) => located === DIRECTORY ? null : located, () => null)
  }

  // `file`: a filesystem path below the root (not URL-encoded), as sendFile takes
  // it; a directory is not found. `encoding`: the file is a precompressed body the
  // caller chose, sent with that Content-Encoding (by sendfile: zcopy's own).
  // `stat`: the regular file's stat the caller just took, looking it up as this
  // handler would (an adapter's own lookup): not looked up again.
  serveFilePath (req, res, { file, encoding, stat }, onFound) {
    const resolved = resolvePath(this.files.root, file, this.options.dotfiles)
    const send = (located) => {
      if (located === DIRECTORY) throw new HttpError(404)
      return this.files.serve(req, res, encoding ? { ...located, encoding } : located, onFound)
    }
    if (stat !== undefined) return send({ path: resolved.path, stat })
    return locateFile(resolved, this.options, this.lookUp).then(send)
  }

  // → Promise<boolean>: whether the request was answered. `how` (all optional):
  // `url` (default req.url), `originalUrl` (default req.originalUrl || url),
  // `file` (a filesystem path below the root instead of a URL; `encoding`: the
  // Content-Encoding of that file, a precompressed body the caller picked;
  // `stat`: its stat, see serveFilePath), `fallsThrough(err)` (whether an error
  // met before a file was chosen, status < 500, means false rather than a
  // rejection; default: the `fallthrough` option), `onFound()` (runs before
  // anything is written).
  handle (req, res, how = {}) {
    // A URL is served to GET and HEAD only; a file named by the app (`file`), like
    // sendFile's, to any method (HEAD without a body).
    if (how.file === undefined && req.method !== 'GET' && req.method !== 'HEAD') return Promise.resolve(false)
    let found = false
    const onFound = how.onFound || NOTHING
    const markFound = () => {
      found = true
      onFound()
    }
    const fallsThrough = how.fallsThrough || (() => this.fallthrough)
    const answer = promiseOf(() => {
      if (how.file !== undefined) return this.serveFilePath(req, res, how, markFound)
      const url = how.url === undefined ? req.url : how.url
      return this.serve(req, res, url, how.originalUrl || req.originalUrl || url, markFound)
    })
    if (answer === ANSWERED_IN_CALL) return HANDLED_IN_CALL
    return answer.then(TRUE, (err) => {
      if (!found) {
        if (err.status < 500 && fallsThrough(err)) return false
        throw err
      }
      if ((err.status === 412 || err.status === 416) && !res.headersSent) {
        replaceWithErrorText(res, err)
        return true
      }
      throw err
    })
  }

  // { openFiles, watchedDirectories, memoryBytes }: what the caches hold now;
  // with `compress`, `compressed`: what the variant store made and sent.
  stats () {
    return this.variants === null ? this.cache.stats() : { ...this.cache.stats(), compressed: this.variants.stats() }
  }

  // → Promise resolved once no compressed variant is being made or queued.
  compressed () {
    return this.variants === null ? Promise.resolve() : this.variants.whenIdle()
  }

  // → Promise of the folder larger variants are written to (not always
  // `cacheDir`: see ./compress/cache-dir.js), or of null: none (no
  // `compress`, `cacheDir: false`, or none could be made).
  compressedFolder () {
    return this.variants === null ? Promise.resolve(null) : this.variants.folder().then((dir) => dir || null)
  }

  // Closes the cached file descriptors and the root directory's (they also close
  // when the server does), and drops the compressed variants (removing their folder).
  close () {
    return this.variants === null ? this.cache.clear() : Promise.all([this.cache.clear(), this.variants.close()]).then(() => {})
  }
}

module.exports = { StaticHandler }
