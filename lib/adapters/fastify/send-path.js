'use strict'

// What @fastify/static does with a path to serve (from a URL below the prefix,
// reply.sendFile or reply.download), zcopy sending the file: the guards, then
// for each root in turn the precompressed siblings, the file, its directory
// (redirect, index, listing), and otherwise Fastify's not-found handler.

const path = require('node:path')
const Negotiator = require('negotiator')
const mime = require('mime-types')
const { DIRECTORY, locateFile, resolvePath, spellingBelow } = require('../../http')
const { FST_STATIC_FORBIDDEN_PATH } = require('./errors')
const { isListRoute, listedDirectory, sendList } = require('./dir-list')
const { answerWithFile } = require('./reply')
const { isNonCanonical } = require('../raw-path')
const { hasInnerDotDot, redirectUrl } = require('./request-path')

const CODINGS = ['br', 'gzip', 'deflate']
const SUFFIX = { br: '.br', gzip: '.gz', deflate: '.deflate' }

// The coding to try next for `headers`, '*' counting as gzip; none tried yet in
// `checked`; undefined when none is acceptable.
function nextEncoding (headers, checked) {
  const header = headers['accept-encoding']
  if (header === undefined) return undefined
  const available = CODINGS.filter((coding) => !checked.has(coding))
  if (available.length === 0) return undefined
  const accept = { 'accept-encoding': String(header).toLowerCase().replace(/\*/g, 'gzip') }
  return new Negotiator({ headers: accept }).encodings(available, { preferred: available })
    .find((coding) => available.includes(coding))
}

// { type: 'file', path } | { type: 'directory', path } | { type: 'error', error }
// for `pathname` (decoded) below `root` (null: an absolute path), as send finds it,
// each name looked up by `lookUp` (the handler's: a file found is opened in the
// same pool job, into the cache its answer takes it from). → Promise of it,
// never rejected.
async function probe (root, pathname, options, lookUp) {
  try {
    const resolved = resolvePath(root, pathname, options.dotfiles)
    const located = await locateFile(resolved, options, lookUp)
    if (located === DIRECTORY) return { type: 'directory', path: resolved.path }
    return { type: 'file', path: located.path, stat: located.stat }
  } catch (err) {
    return { type: 'error', error: err }
  }
}

// → Promise of the first of `index` that is a file in the directory, or undefined.
async function indexFileOf (root, pathname, index, lookUp) {
  for (const name of index) {
    const found = await probe(root, path.posix.join(pathname, name), { dotfiles: 'allow', index: [], extensions: [] }, lookUp)
    if (found.type === 'file') return name
  }
  return undefined
}

// → { path, spelling: Promise } for the file `pathname` names below `root`
// (never rejected), or null when it names none.
function askedSpelling (root, pathname, options) {
  let file
  try {
    file = path.resolve(resolvePath(root, pathname, options.dotfiles).path)
  } catch {
    return null
  }
  return { path: file, spelling: spellingBelow(root, file) }
}

const forbidden = (reply) => reply.send(new FST_STATIC_FORBIDDEN_PATH())

// → the function (request, reply, pathname, roots, how) → Promise that answers.
// `handlerFor(root, callOptions)` gives the zcopy handler for a root; `opts` are
// the plugin's options, `prefix` its route prefix.
function pathSender ({ opts, prefix, handlerFor }) {
  const allowedPath = opts.allowedPath

  async function sendPath (request, reply, pathname, roots, how = {}) {
    const { offset = 0, callOptions, checked, spelling = Boolean(allowedPath), allowed = false } = how
    let root = roots === undefined ? undefined : [].concat(roots)[offset]
    if (root === undefined) {
      if (!path.isAbsolute(pathname)) return reply.callNotFound()
      root = null
    }
    if (hasInnerDotDot(pathname) || isNonCanonical(pathname)) return forbidden(reply)
    const normalized = pathname.startsWith('/') ? path.posix.normalize(pathname) : pathname
    if (allowedPath && !allowed && !allowedPath(normalized, root === null ? undefined : root, request)) return reply.callNotFound()

    const handler = handlerFor(root, callOptions)
    const options = handler.options
    const handlerRoot = root === null ? null : options.root
    // As @fastify/static: a URL's path (and, with allowedPath, the app's) is
    // served only as spelled on disk (see ../../http/spelling). The request
    // path's own spelling is checked while it is looked up.
    const asked = how.asked !== undefined ? how.asked : spelling && handlerRoot !== null ? askedSpelling(handlerRoot, pathname, options) : null
    const retry = (nextPath, more) => sendPath(request, reply, nextPath, roots, { offset, callOptions, checked, spelling, asked, ...more })
    const misspelled = async (found, encoding) => {
      if (!spelling || handlerRoot === null) return false
      let spelled = encoding ? found.path.slice(0, -SUFFIX[encoding].length) : found.path
      if (found.type === 'file' && pathname.endsWith('/')) spelled = path.dirname(spelled)
      const answer = asked !== null && asked.path === path.resolve(spelled) ? asked.spelling : spellingBelow(handlerRoot, spelled)
      return (await answer) !== 'exact'
    }

    let encoding
    let sentPath = pathname
    if (opts.preCompressed) {
      const tried = checked || new Set()
      encoding = nextEncoding(request.headers, tried)
      if (encoding) {
        if (pathname.endsWith('/')) {
          const index = await indexFileOf(handlerRoot, pathname, options.index, handler.lookUp)
          if (!index) return reply.callNotFound()
          sentPath = pathname + index + SUFFIX[encoding]
        } else {
          sentPath = pathname + SUFFIX[encoding]
        }
        const found = await probe(handlerRoot, sentPath, options, handler.lookUp)
        if (found.type === 'file' && await misspelled(found, encoding)) return forbidden(reply)
        tried.add(encoding)
        const next = () => retry(pathname, { checked: tried })
        // A sibling refused when opened (a link out of the root): the next coding.
        if (found.type === 'file') return sendFound(request, reply, { handler, found, pathname, sentPath, encoding, root, callOptions, notFound: next })
        return next()
      }
    }

    const found = await probe(handlerRoot, pathname, options, handler.lookUp)
    if (found.type !== 'error' && await misspelled(found)) return forbidden(reply)
    if (found.type === 'file') return sendFound(request, reply, { handler, found, pathname, sentPath, root, callOptions })
    if (found.type === 'directory') {
      if (opts.list) return sendList({ reply, dir: found.path, options: opts.list, route: pathname, prefix, dotfiles: opts.dotfiles })
      if (opts.redirect === true) return reply.redirect(redirectUrl(request.raw.url), 301)
      if (!pathname.endsWith('/') && await indexFileOf(handlerRoot, pathname, options.index, handler.lookUp)) {
        return sendPath(request, reply, pathname + '/', roots, { offset, callOptions, spelling })
      }
      return reply.callNotFound()
    }
    const error = found.error
    if (pathname.endsWith('/') && options.index.length === 0 && opts.list) {
      const dir = listedDirectory(handlerRoot, pathname)
      if (dir) return sendList({ reply, dir, options: opts.list, route: pathname, prefix, dotfiles: opts.dotfiles })
    }
    if (error.status === 404) {
      if (opts.list && isListRoute(pathname, opts.list)) {
        const dir = listedDirectory(handlerRoot, pathname)
        if (dir) return sendList({ reply, dir, options: opts.list, route: pathname, prefix, dotfiles: opts.dotfiles })
      }
      if (roots !== undefined && offset < [].concat(roots).length - 1) {
        return sendPath(request, reply, pathname, roots, { offset: offset + 1, callOptions, spelling })
      }
      return reply.callNotFound()
    }
    return reply.send(error)
  }

  // The path allowedPath is asked about for the file finally chosen (an index
  // file, a name with an extension added): as the request's path was written.
  function finalPathname (selected, root, leadingSlash) {
    if (root === null) return selected
    const relative = path.relative(root, selected)
    if (relative === '..' || relative.startsWith('..' + path.sep) || path.isAbsolute(relative)) return undefined
    const posix = relative.split(path.sep).join('/')
    return leadingSlash ? '/' + posix : posix
  }

  // `chosen`: the file found, the handler (and its root) that found it, the
  // request's pathname and the one sent (a precompressed sibling's, `encoding`),
  // and for a sibling, what answers when it is not found once opened.
  async function sendFound (request, reply, chosen) {
    const { handler, found, pathname, sentPath, encoding, root, callOptions, notFound } = chosen
    const onFile = callOptions !== undefined && 'onFile' in callOptions ? callOptions.onFile : opts.onFile
    if (allowedPath) {
      const asked = pathname.startsWith('/') ? path.posix.normalize(pathname) : pathname
      const selected = encoding && found.path.endsWith(SUFFIX[encoding]) ? found.path.slice(0, -SUFFIX[encoding].length) : found.path
      const final = finalPathname(selected, root, asked.startsWith('/'))
      if (final === undefined || (final !== asked && !allowedPath(final, root === null ? undefined : root, request))) {
        return reply.callNotFound()
      }
    }
    if (onFile !== undefined) {
      if (typeof onFile !== 'function') throw new TypeError('onFile option must be a function')
      await onFile(found.path, found.stat)
    }
    const headers = {}
    if (encoding) {
      const typePath = pathname.endsWith('/') ? sentPath.slice(0, -SUFFIX[encoding].length) : pathname
      if (opts.contentType !== false) headers['content-type'] = mime.contentType(path.extname(typePath)) || 'application/octet-stream'
      headers['content-encoding'] = encoding
    }
    const file = path.relative(handler.options.root, found.path)
    return answerWithFile(handler, request, reply, file, { headers, vary: Boolean(opts.preCompressed), contentType: opts.contentType, stat: found.stat, notFound })
  }

  return sendPath
}

module.exports = { pathSender }
