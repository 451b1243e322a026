'use strict'

// zcopy/fastify: a Fastify plugin in the shape of @fastify/static, registered
// with fastify-plugin (not encapsulated):
//
//   fastify.register(require('zcopy/fastify'), { root, prefix: '/public/' })
//
// Options: `root` (required), `prefix` (default '/'; the routes are GET and HEAD
// `${prefix}*`, the prefix given a trailing slash), `decorateReply` (default true:
// `reply.sendFile(path, [root])`), and zcopy.serveStatic's options (dotfiles,
// index, extensions, redirect, maxAge, immutable, etag, lastModified, acceptRanges,
// cacheControl, precompressed, setHeaders, onSent, maxOpenFiles, memoryCache,
// allowSymlinksOutsideRoot). `fallthrough` has no meaning here.
//
// - A file (200/206/304/412/416) or a directory redirect (301) is written by zcopy
//   on the raw response, after reply.hijack(); headers set earlier with
//   reply.header() (hooks such as CORS) are carried over. onSend hooks do not see
//   the body (there is no payload), as with any hijacked reply.
// - Not found (404 before a file was chosen) goes to Fastify's not-found handler,
//   reply.callNotFound(), as @fastify/static does; other errors (403 for
//   `dotfiles: 'deny'`, 400) go to Fastify's error handler through reply.send(err).
// - The cached file descriptors close with the Fastify instance (onClose).

const path = require('node:path')
const fp = require('fastify-plugin')
const { createStaticHandler } = require('../http/serve-static')

const notFoundOnly = (err) => err.status === 404

// The route's prefix (a parent's prefix included), once, from its url: '/x/*' → '/x/'.
function routePrefix (request) {
  const url = (request.routeOptions && request.routeOptions.url) || '/*'
  return url.endsWith('*') ? url.slice(0, -1) : url
}

// The request-target below the prefix, still URL-encoded, with its query: what the
// handler resolves, as it resolves req.url under an Express mount. When the raw URL
// does not start with the prefix as written (case-insensitive routing, duplicate
// slashes), the wildcard Fastify matched, re-encoded.
function urlBelow (prefix, request) {
  const raw = request.raw.url
  const query = raw.search(/[?#]/)
  const pathname = query === -1 ? raw : raw.slice(0, query)
  if (pathname.startsWith(prefix)) return raw.slice(prefix.length - 1)
  const wildcard = (request.params && request.params['*']) || ''
  return '/' + wildcard.split('/').map(encodeURIComponent).join('/') + (query === -1 ? '' : raw.slice(query))
}

function carryHeaders (reply) {
  const raw = reply.raw
  const headers = reply.getHeaders()
  for (const name of Object.keys(headers)) {
    if (headers[name] !== undefined && !raw.hasHeader(name)) raw.setHeader(name, headers[name])
  }
}

// Answers `reply` through `handler`; `how` as handler.handle takes it.
function answer (handler, request, reply, how) {
  let hijacked = false
  how.fallsThrough = notFoundOnly
  how.onFound = () => {
    hijacked = true
    carryHeaders(reply)
    reply.hijack()
  }
  handler.handle(request.raw, reply.raw, how).then((answered) => {
    if (!answered) reply.callNotFound()
  }, (err) => {
    if (!hijacked) {
      if (err.status === 404) reply.callNotFound()
      else reply.send(err)
      return
    }
    // Once hijacked, Fastify cannot answer: the transfer failed (the response is
    // destroyed already) or headers were sent by someone else.
    request.log.error({ err }, 'zcopy: file response failed')
    if (!reply.raw.headersSent && !reply.raw.destroyed) {
      reply.raw.statusCode = 500
      reply.raw.end()
    } else {
      reply.raw.destroy()
    }
  })
  return reply
}

function zcopyFastify (fastify, options, done) {
  const { root, prefix = '/', decorateReply = true, ...serveOptions } = options || {}
  if (typeof root !== 'string' || root === '') {
    done(new TypeError('zcopy/fastify: option root (a directory path) is required'))
    return
  }
  if (typeof prefix !== 'string') {
    done(new TypeError('zcopy/fastify: option prefix must be a string'))
    return
  }
  let handler
  try {
    handler = createStaticHandler(root, serveOptions)
  } catch (err) {
    done(err)
    return
  }
  const handlers = [handler]
  // reply.sendFile's root overrides → their handlers (each with its own open-file
  // cache, kept until the instance closes: meant for a few fixed roots).
  const forRoot = new Map()
  forRoot.set(handler.options.root, handler)
  const handlerFor = (otherRoot) => {
    const resolved = path.resolve(otherRoot)
    let other = forRoot.get(resolved)
    if (other === undefined) {
      other = createStaticHandler(resolved, serveOptions)
      forRoot.set(resolved, other)
      handlers.push(other)
    }
    return other
  }

  fastify.addHook('onClose', (instance, closed) => {
    Promise.all(handlers.map((h) => h.close())).then(() => closed(), closed)
  })

  if (decorateReply) {
    // reply.sendFile(path, [root]) or (path, { root }): `path` is a file-system path
    // below the root (not URL-encoded); a directory or a miss is not found.
    fastify.decorateReply('sendFile', function sendFile (file, rootOverride, callOptions) {
      const other = typeof rootOverride === 'string' ? rootOverride : (rootOverride || callOptions || {}).root
      const h = other ? handlerFor(other) : handler
      return answer(h, this.request, this, { file: String(file) })
    })
  }

  const base = prefix.endsWith('/') ? prefix : prefix + '/'
  let matched = null
  fastify.route({
    method: ['GET', 'HEAD'],
    url: base + '*',
    handler (request, reply) {
      if (matched === null) matched = routePrefix(request)
      return answer(handler, request, reply, { url: urlBelow(matched, request), originalUrl: request.raw.url })
    }
  })
  done()
}

module.exports = fp(zcopyFastify, { fastify: '5.x', name: 'zcopy-fastify' })
module.exports.default = module.exports
module.exports.zcopyFastify = module.exports
