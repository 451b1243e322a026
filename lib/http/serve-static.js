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

const { STATUS_CODES } = require('node:http')
const path = require('node:path')
const { defaultMaxOpenFiles, MemoryBudget, OpenFileCache } = require('./files')
const { HttpError } = require('./http-error')
const { DIRECTORY, directoryLocation, locateFile, pathResolver, redirectToDirectory, resolvePath, spellingBelow, splitUrl } = require('./target')
const { VariantStore } = require('./compress')
const { normalizeOptions } = require('./options')
const { promiseOf } = require('./promise-of')
const { waitForTurn } = require('./delivery')
const { ANSWERED_IN_CALL, FileServer } = require('./serve-file')

const DEFAULT_MAX_OPEN_FILES = defaultMaxOpenFiles()
const DEFAULT_MEMORY_CACHE = 32 * 1024 * 1024
// inotify watches are a per-user budget (fs.inotify.max_user_watches) that
// editors, bundlers and other servers share: past this many directories, files
// are checked by a stat per request instead.
const DEFAULT_MAX_WATCHES = 1024
const RESOLVED_PATHS = 1024
const TRUE = () => true
const HANDLED_IN_CALL = Promise.resolve(true) // handle()'s answer when serve() answered in the call
const NOTHING = () => {}

function methodNotAllowed (res) {
  res.statusCode = 405
  res.setHeader('Allow', 'GET, HEAD')
  res.setHeader('Content-Length', '0')
  res.end()
}

// 412 and 416 found once the file was chosen, answered as send answers its errors:
// the file's headers cleared, the error's own (416: Content-Range) set, a short
// text body (Koa's and Fastify's default error bodies are text too).
function replaceWithErrorText (res, err) {
  for (const name of res.getHeaderNames()) res.removeHeader(name)
  if (err.headers) for (const name of Object.keys(err.headers)) res.setHeader(name, err.headers[name])
  const body = STATUS_CODES[err.status] || String(err.status)
  res.statusCode = err.status
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

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
  const fallthrough = options.fallthrough !== false
  const redirect = options.redirect !== false
  const maxOpenFiles = options.maxOpenFiles === undefined ? DEFAULT_MAX_OPEN_FILES : options.maxOpenFiles
  if (!Number.isInteger(maxOpenFiles) || maxOpenFiles < 0) {
    throw new TypeError('option maxOpenFiles must be a non-negative integer')
  }
  const memoryCache = options.memoryCache === undefined ? DEFAULT_MEMORY_CACHE : options.memoryCache
  if (!Number.isSafeInteger(memoryCache) || memoryCache < 0) {
    throw new TypeError('option memoryCache must be a non-negative integer')
  }
  const maxWatches = options.maxWatches === undefined ? DEFAULT_MAX_WATCHES : options.maxWatches
  if (!Number.isSafeInteger(maxWatches) || maxWatches < 0) {
    throw new TypeError('option maxWatches must be a non-negative integer')
  }
  const memory = new MemoryBudget(memoryCache) // the cache's small files and the variants alike
  const cache = new OpenFileCache({ max: maxOpenFiles, memory, maxWatches })
  // Compressed variants (`compress`), made once per file version: ./compress/store.js.
  // They are made from the open-file cache's descriptors: none without it.
  if (normalized.compress && maxOpenFiles === 0) {
    process.emitWarning('compress needs the open-file cache (maxOpenFiles above 0): files are sent uncompressed', { code: 'ZCOPY_COMPRESS' })
  }
  const variants = normalized.compress && maxOpenFiles > 0 ? new VariantStore(normalized.compress, cache, { memory }) : null
  const opts = delivery === undefined && variants === null ? normalized : Object.freeze({ ...normalized, delivery, variants })
  const files = new FileServer(opts, cache)
  const { lookUp } = files // a miss's stat, with its open where it can
  const { paths } = cache
  // The resolver remembers as many request paths as the cache can hold files, so
  // that a working set the cache holds is resolved once, not on every request.
  const resolve = pathResolver(files.root, opts.dotfiles, Math.max(RESOLVED_PATHS, maxOpenFiles))

  // → Promise. Throws (before any file is chosen) or rejects with an HttpError.
  // `url`: the request-target below the mount point; `originalUrl`: the whole one
  // (directory redirects go there). `onFound` runs once, before anything is
  // written: the file is open and confirmed, or a directory redirect follows.
  function serve (req, res, url, originalUrl, onFound) {
    let { pathname } = splitUrl(url)
    const original = originalUrl === url ? pathname : splitUrl(originalUrl).pathname
    // No path (asterisk-form '*', a bare name): nothing to serve.
    if (pathname === null || original === null) throw new HttpError(404)
    // Mounted at /static, a request for /static must redirect to /static/.
    if (pathname === '/' && !original.endsWith('/')) pathname = ''
    const resolved = resolve(pathname)
    const canRemember = rememberable(resolved)
    const remembered = canRemember ? paths.lookup(resolved.path) : null
    if (remembered !== null) return files.serve(req, res, remembered, onFound)
    const since = paths.lookupTick()
    return locateFile(resolved, opts, lookUp).then((located) => serveLocated(req, res, { pathname, resolved, located, originalUrl, canRemember, since }, onFound))
  }

  // The miss path's answer once the lookup found `located` (a file or DIRECTORY),
  // once it is known to be spelled as asked, where that matters (`exactSpelling`).
  function serveLocated (req, res, found, onFound) {
    if (!exactSpelling) return serveFileOrDirectory(req, res, found, onFound)
    const { resolved, located } = found
    const spelled = located === DIRECTORY || resolved.trailingSlash ? resolved.path : located.path
    return spellingBelow(files.root, spelled).then((spelling) => {
      if (spelling !== 'exact') throw new HttpError(404)
      return serveFileOrDirectory(req, res, found, onFound)
    })
  }

  // A file is served (and its path remembered); a directory gets its index or
  // a redirect, as `directories` says.
  function serveFileOrDirectory (req, res, { pathname, resolved, located, originalUrl, canRemember, since }, onFound) {
    if (located === DIRECTORY) {
      if (directories === 'index' && !resolved.trailingSlash) {
        return locateFile(resolve(pathname + '/'), opts, lookUp).then((index) => {
          if (index === DIRECTORY) throw new HttpError(404)
          return files.serve(req, res, index, onFound)
        })
      }
      if (!redirect || resolved.trailingSlash) throw new HttpError(404)
      // A redirect that a browser would take to another host is not sent.
      const location = directoryLocation(originalUrl)
      if (location === null) throw new HttpError(404)
      return files.checkDirectoryConfinement(resolved.path).then(() => {
        onFound()
        redirectToDirectory(res, location)
      })
    }
    if (!canRemember || located.path === files.root) return files.serve(req, res, located, onFound)
    // Found by its name's stat: remembered, if watches can vouch for it, so that
    // the next request for it needs none (see RememberedPaths.remember()).
    return files.serve(req, res, located, (entry) => {
      remember(resolved, located, entry, since)
      onFound()
    })
  }

  // Remembers that `resolved` names `located`, sent as `entry`; its lookup began
  // at `since` (paths.lookupTick()). When that was a precompressed sibling, the
  // file itself is opened to be remembered (unless it is known that it cannot
  // be): a later request negotiates from it without a stat.
  function remember (resolved, located, entry, since) {
    const lookup = { key: resolved.path, root: files.root, relocate: () => relocate(resolved), found: located, since }
    if (entry.path === located.path) {
      paths.remember(entry, lookup)
      return
    }
    if (!paths.mayRemember(located.path)) return
    files.openLocated(located).then((file) => {
      paths.remember(file, lookup).then(() => cache.release(file))
    }, NOTHING)
  }

  // A request path whose resolved path says what it asks for: a trailing slash in
  // both or in neither ('/dir%2f' resolves to a directory's path but is no
  // directory request).
  function rememberable (resolved) {
    return resolved.trailingSlash === resolved.path.endsWith(path.sep)
  }

  function relocate (resolved) {
    return locateFile(resolved, opts).then((located) => located === DIRECTORY ? null : located)
  }

  // `file`: a filesystem path below the root (not URL-encoded), as sendFile takes
  // it; a directory is not found. `encoding`: the file is a precompressed body the
  // caller chose, sent with that Content-Encoding (by sendfile: zcopy's own).
  // `stat`: the regular file's stat the caller just took, looking it up as this
  // handler would (an adapter's own lookup): not looked up again.
  function serveFilePath (req, res, { file, encoding, stat }, onFound) {
    const resolved = resolvePath(files.root, file, opts.dotfiles)
    const send = (located) => {
      if (located === DIRECTORY) throw new HttpError(404)
      return files.serve(req, res, encoding ? { ...located, encoding } : located, onFound)
    }
    if (stat !== undefined) return send({ path: resolved.path, stat })
    return locateFile(resolved, opts, lookUp).then(send)
  }

  // → Promise<boolean>, see above. `how` (all optional): `url` (default req.url),
  // `originalUrl` (default req.originalUrl || url), `file` (a filesystem path below
  // the root instead of a URL; `encoding`: the Content-Encoding of that file, a
  // precompressed body the caller picked; `stat`: its stat, see serveFilePath), `fallsThrough(err)` (whether an error met before a
  // file was chosen, status < 500, means false rather than a rejection; default: the
  // `fallthrough` option), `onFound()` (runs before anything is written).
  function handle (req, res, how = {}) {
    // A URL is served to GET and HEAD only; a file named by the app (`file`), like
    // sendFile's, to any method (HEAD without a body).
    if (how.file === undefined && req.method !== 'GET' && req.method !== 'HEAD') return Promise.resolve(false)
    let found = false
    const onFound = how.onFound || NOTHING
    const markFound = () => {
      found = true
      onFound()
    }
    const fallsThrough = how.fallsThrough || (() => fallthrough)
    const answer = promiseOf(() => {
      if (how.file !== undefined) return serveFilePath(req, res, how, markFound)
      const url = how.url === undefined ? req.url : how.url
      return serve(req, res, url, how.originalUrl || req.originalUrl || url, markFound)
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

  return {
    options: opts,
    fallthrough,
    redirect,
    serve,
    handle,
    // → Promise of a file's stat, as fs.stat gives it (the same errors), for a
    // caller about to have handle() send it ({ file, stat }): a regular file
    // is opened in the same pool job, into this handler's open-file cache.
    lookUp,
    // { openFiles, watchedDirectories, memoryBytes }: what the caches hold now;
    // with `compress`, `compressed`: what the variant store made and sent.
    stats: () => variants === null ? cache.stats() : { ...cache.stats(), compressed: variants.stats() },
    // → Promise resolved once no compressed variant is being made or queued.
    compressed: () => variants === null ? Promise.resolve() : variants.whenIdle(),
    // → Promise of the folder larger variants are written to (not always
    // `cacheDir`: see ./compress/cache-dir.js), or of null: none (no
    // `compress`, `cacheDir: false`, or none could be made).
    compressedFolder: () => variants === null ? Promise.resolve(null) : variants.folder().then((dir) => dir || null),
    // Closes the cached file descriptors and the root directory's (they also close
    // when the server does), and drops the compressed variants (removing their folder).
    close: () => variants === null ? cache.clear() : Promise.all([cache.clear(), variants.close()]).then(() => {})
  }
}

function serveStatic (root, options) {
  const handler = createStaticHandler(root, options)
  const { serve, fallthrough } = handler

  function serveStaticMiddleware (req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return fallthrough ? next() : methodNotAllowed(res)
    }
    // Pipelined behind a response still going out: answered after it.
    if (waitForTurn(serveStaticMiddleware, req, res, next)) return
    const state = { found: false }
    const url = req.url
    const answer = promiseOf(() => serve(req, res, url, req.originalUrl || url, () => { state.found = true }))
    if (answer === ANSWERED_IN_CALL) return // answered in the call (the memory cache, HEAD, 304)
    answer.catch((err) => {
      // Not found (or refused) before a file was chosen: the next handler's turn.
      if (fallthrough && !state.found && err.status < 500) next()
      else next(err)
    })
  }

  serveStaticMiddleware.stats = handler.stats
  serveStaticMiddleware.compressed = handler.compressed
  serveStaticMiddleware.compressedFolder = handler.compressedFolder
  serveStaticMiddleware.close = handler.close
  return serveStaticMiddleware
}

module.exports = { createStaticHandler, serveStatic }
