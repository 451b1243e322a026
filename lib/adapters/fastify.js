'use strict'

// zcopy/fastify: a drop-in for @fastify/static (10.x) that sends files with zcopy.
//
//   fastify.register(require('zcopy/fastify'), { root, prefix: '/public/' })
//
// Options, names and defaults are @fastify/static's: root (a directory, a file:
// URL or an array of them, tried in order), prefix, prefixAvoidTrailingSlash,
// serve, wildcard (+ globIgnore, serveDotFiles), decorateReply (reply.sendFile,
// reply.download), redirect, index, extensions, dotfiles ('allow'), list,
// allowedPath, preCompressed, setHeaders(reply, path, stat), acceptRanges,
// cacheControl, maxAge, immutable, etag, lastModified, constraints, schemaHide,
// logLevel; and zcopy's maxOpenFiles, memoryCache, maxWatches, allowSymlinksOutsideRoot,
// onSent. A request path with '.', '..' or empty segments or a backslash (raw or
// percent-encoded) is refused with 403, so that no file is served past another
// route that guards its path (see ./fastify/request-path.js).
//
// A file's answer goes out through the reply: onSend hooks see its body, a
// Readable with the file's `path` (@fastify/compress may replace it); left as it
// is, zcopy sends it (see ./fastify/reply.js). Not found goes to Fastify's
// not-found handler, other errors to its error handler. The open files close
// with the Fastify instance.

const path = require('node:path')
const fp = require('fastify-plugin')
const { createStaticHandler } = require('../http')
const { attachment } = require('./fastify/content-disposition')
const { listOptionsError } = require('./fastify/dir-list')
const errors = require('./fastify/errors')
const { addFileRoutes } = require('./fastify/file-routes')
const { checkRoot, normalizeRoot } = require('./fastify/options')
const { FORBIDDEN, pathBelowPrefix, prefixMatcher, redirectUrl } = require('./fastify/request-path')
const { FASTIFY_DELIVERY, answerWithUrl, replySetHeaders } = require('./fastify/reply')
const { pathSender } = require('./fastify/send-path')

const { FST_STATIC_FORBIDDEN_PATH, FST_STATIC_INVALID_OPTION_VALUE } = errors

// The options a sendFile call may override (@fastify/send's per-call options),
// and all those the zcopy handlers take from the plugin's.
const CALL_OPTIONS = ['acceptRanges', 'cacheControl', 'dotfiles', 'etag', 'extensions', 'immutable', 'index',
  'lastModified', 'maxAge']
const HANDLER_OPTIONS = [...CALL_OPTIONS, 'contentType', 'maxOpenFiles', 'memoryCache', 'maxWatches', 'compress',
  'allowSymlinksOutsideRoot', 'onSent']

// Handlers kept for sendFile's per-call roots and options (see handlerFor).
const MAX_CALL_HANDLERS = 32

function pick (from, names) {
  const picked = {}
  for (const name of names) if (from[name] !== undefined) picked[name] = from[name]
  return picked
}

async function zcopyFastify (fastify, givenOptions) {
  const opts = { ...givenOptions }
  if (opts.serve !== false || opts.root !== undefined) {
    opts.root = normalizeRoot(opts.root)
    checkRoot(fastify, opts.root, opts.suppressWarning === true)
  }
  if (opts.setHeaders !== undefined && typeof opts.setHeaders !== 'function') {
    throw new FST_STATIC_INVALID_OPTION_VALUE('setHeaders', 'must be a function')
  }
  const listError = listOptionsError(opts)
  if (listError) throw listError
  if (opts.wildcard !== undefined && typeof opts.wildcard !== 'boolean') {
    throw new FST_STATIC_INVALID_OPTION_VALUE('wildcard', 'must be a boolean')
  }
  if (opts.dotfiles === undefined) opts.dotfiles = 'allow'
  if (opts.prefix === undefined) opts.prefix = '/'
  const prefix = opts.prefixAvoidTrailingSlash || opts.prefix.endsWith('/') ? opts.prefix : opts.prefix + '/'

  // One zcopy handler per root and per-call options. The plugin's own roots keep
  // theirs until the instance closes; those made for sendFile's per-call roots
  // and options are bounded, least recently used closed first (a closed handler
  // lets its transfers in flight finish).
  const baseOptions = { ...pick(opts, HANDLER_OPTIONS), setHeaders: replySetHeaders(opts.setHeaders) }
  const handlers = new Map()
  const pinned = new Set([].concat(opts.root).filter((root) => typeof root === 'string').map((root) => path.resolve(root)))
  const handlerFor = (root, callOptions) => {
    const dir = root === null ? '/' : path.resolve(root)
    const own = pick(callOptions || {}, CALL_OPTIONS) // plain values: JSON is their key
    const key = Object.keys(own).length === 0 ? dir : dir + '\0' + JSON.stringify(own)
    let handler = handlers.get(key)
    if (handler === undefined) handler = createStaticHandler(dir, { ...baseOptions, ...own, redirect: false }, { exactSpelling: true, delivery: FASTIFY_DELIVERY })
    handlers.delete(key) // re-inserted last: the Map's order is the LRU order
    handlers.set(key, handler)
    if (handlers.size > pinned.size + MAX_CALL_HANDLERS) {
      for (const [oldKey, old] of handlers) {
        if (pinned.has(oldKey)) continue
        handlers.delete(oldKey)
        old.close()
        break
      }
    }
    return handler
  }
  if (opts.serve !== false) for (const root of [].concat(opts.root)) handlerFor(root) // bad options throw here
  fastify.addHook('onClose', async () => {
    await Promise.all([...handlers.values()].map((handler) => handler.close()))
  })

  const sendPath = pathSender({ opts, prefix, handlerFor })
  // constraints and logLevel only when given: a route given logLevel (even
  // undefined) gets a child logger per request.
  const routeOptions = {
    ...pick(opts, ['constraints', 'logLevel']),
    schema: { hide: opts.schemaHide === undefined ? true : opts.schemaHide },
    errorHandler (err, request, reply) {
      if (err && err.code === 'ERR_STREAM_PREMATURE_CLOSE') {
        request.raw.destroy()
        return
      }
      return fastify.errorHandler(err, request, reply)
    }
  }

  if (opts.decorateReply !== false) {
    const sendOwn = (reply, file, rootOrOptions, options) => {
      const callOptions = typeof rootOrOptions === 'object' && rootOrOptions !== null ? rootOrOptions : options
      const root = typeof rootOrOptions === 'string' ? rootOrOptions : callOptions && callOptions.root
      const perCall = { ...callOptions }
      delete perCall.root
      const hasPerCall = Object.keys(perCall).length > 0
      sendPath(reply.request, reply, file, root || opts.root, { callOptions: hasPerCall ? perCall : undefined }).catch((err) => reply.send(err))
      return reply
    }
    fastify.decorateReply('sendFile', function sendFile (file, rootOrOptions, options) {
      return sendOwn(this, file, rootOrOptions, options)
    })
    fastify.decorateReply('download', function download (file, fileName, options = {}) {
      const callOptions = typeof fileName === 'object' ? fileName : options
      this.header('content-disposition', attachment(typeof fileName === 'string' ? fileName : file))
      return sendOwn(this, file, callOptions)
    })
  }

  if (opts.serve === false) return
  if (opts.wildcard === false) {
    await addFileRoutes(fastify, { opts, prefix, routeOptions, sendPath })
    return
  }
  // Plain paths (no '%') of a plain setup go to the zcopy handler as they are:
  // it remembers what each path resolved to. Anything it does not find takes
  // the long way, which finds what else it may be (a directory, another root).
  // With allowedPath, a path that can only name itself (no trailing slash, no
  // extensions to add) takes it too, once allowedPath has allowed it.
  const fast = !Array.isArray(opts.root) && !opts.preCompressed && !opts.list && opts.onFile === undefined
  const rootHandler = fast ? handlerFor(opts.root) : null
  const namesOnlyItself = (pathname) => !pathname.endsWith('/') && rootHandler.options.extensions.length === 0
  const answerPath = (request, reply, pathname) => {
    if (fast && !request.raw.url.includes('%') && (!opts.allowedPath || namesOnlyItself(pathname))) {
      let allowed = false
      if (opts.allowedPath) {
        if (!opts.allowedPath(path.posix.normalize(pathname), opts.root, request)) {
          reply.callNotFound()
          return Promise.resolve()
        }
        allowed = true
      }
      // Without '%', the path below the prefix is as the request wrote it.
      return answerWithUrl(rootHandler, request, reply, pathname, opts.contentType).then((answered) => {
        if (!answered) return sendPath(request, reply, pathname, opts.root, { spelling: true, allowed })
      })
    }
    return sendPath(request, reply, pathname, opts.root, { spelling: true })
  }
  let matchPrefix = null
  fastify.route({
    ...routeOptions,
    method: ['HEAD', 'GET'],
    path: prefix + '*',
    // Returns nothing: the reply answers (a promise that resolved before its
    // body went out would have Fastify answer a second time).
    handler (request, reply) {
      if (matchPrefix === null) matchPrefix = prefixMatcher(request.routeOptions.url)
      const pathname = pathBelowPrefix(request.raw.url, matchPrefix)
      if (pathname === FORBIDDEN) {
        reply.send(new FST_STATIC_FORBIDDEN_PATH())
        return
      }
      if (pathname === undefined) {
        reply.callNotFound()
        return
      }
      answerPath(request, reply, pathname).catch((err) => reply.send(err))
    }
  })
  if (opts.redirect === true && prefix !== opts.prefix) {
    fastify.get(opts.prefix, routeOptions, (request, reply) => {
      reply.redirect(redirectUrl(request.raw.url), 301)
    })
  }
}

module.exports = fp(zcopyFastify, { fastify: '5.x', name: 'zcopy-fastify' })
module.exports.default = zcopyFastify
module.exports.fastifyStatic = zcopyFastify
module.exports.zcopyFastify = module.exports
module.exports.errors = errors
