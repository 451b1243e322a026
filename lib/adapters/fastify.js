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
const { create: contentDisposition } = require('content-disposition')
const fp = require('fastify-plugin')
const { listOptionsError } = require('./fastify/dir-list')
const errors = require('./fastify/errors')
const { addFileRoutes } = require('./fastify/file-routes')
const { HandlerPool, pick } = require('./fastify/handler-pool')
const { checkRoot, normalizeRoot } = require('./fastify/options')
const { FORBIDDEN, pathBelowPrefix, prefixMatcher, redirectUrl } = require('./fastify/request-path')
const { answerWithUrl } = require('./fastify/reply')
const { pathSender } = require('./fastify/send-path')

const { FST_STATIC_FORBIDDEN_PATH, FST_STATIC_INVALID_OPTION_VALUE } = errors

async function zcopyFastify (fastify, givenOptions) {
  const opts = checkedOptions(fastify, givenOptions)
  const prefix = opts.prefixAvoidTrailingSlash || opts.prefix.endsWith('/') ? opts.prefix : opts.prefix + '/'
  const handlers = new HandlerPool(opts)
  if (opts.serve !== false) for (const root of [].concat(opts.root)) handlers.handlerFor(root) // bad options throw here
  fastify.addHook('onClose', async () => { await handlers.close() })

  const handlerFor = (root, callOptions) => handlers.handlerFor(root, callOptions)
  const sendPath = pathSender({ opts, prefix, handlerFor })
  const routeOptions = routeOptionsOf(fastify, opts)
  if (opts.decorateReply !== false) decorateReply(fastify, opts, sendPath)
  if (opts.serve === false) return
  if (opts.wildcard === false) {
    await addFileRoutes(fastify, { opts, prefix, routeOptions, sendPath })
    return
  }
  addWildcardRoute(fastify, { opts, prefix, routeOptions, sendPath, handlerFor })
  if (opts.redirect === true && prefix !== opts.prefix) {
    fastify.get(opts.prefix, routeOptions, (request, reply) => {
      reply.redirect(redirectUrl(request.raw.url), 301)
    })
  }
}

// The plugin's options, checked, with @fastify/static's defaults.
function checkedOptions (fastify, givenOptions) {
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
  return opts
}

// What every route of the plugin is given. constraints and logLevel only when
// given: a route given logLevel (even undefined) gets a child logger per request.
function routeOptionsOf (fastify, opts) {
  return {
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
}

// reply.sendFile(file, [root], [options]) and reply.download(file, [name], [options]).
function decorateReply (fastify, opts, sendPath) {
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
    // attachment with the base name, as @fastify/static writes it (with the same package)
    this.header('content-disposition', contentDisposition(path.basename(String(typeof fileName === 'string' ? fileName : file))))
    return sendOwn(this, file, callOptions)
  })
}

// GET and HEAD under `prefix` + '*'. Plain paths (no '%') of a plain setup go
// to the zcopy handler as they are: it remembers what each path resolved to.
// Anything it does not find takes the long way, which finds what else it may
// be (a directory, another root). With allowedPath, a path that can only name
// itself (no trailing slash, no extensions to add) takes it too, once
// allowedPath has allowed it.
function addWildcardRoute (fastify, { opts, prefix, routeOptions, sendPath, handlerFor }) {
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
}

module.exports = fp(zcopyFastify, { fastify: '5.x', name: 'zcopy-fastify' })
module.exports.default = zcopyFastify
module.exports.fastifyStatic = zcopyFastify
module.exports.zcopyFastify = module.exports
module.exports.errors = errors
