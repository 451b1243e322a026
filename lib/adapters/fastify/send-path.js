'use strict'

// What @fastify/static does with a path to serve (from a URL below the prefix,
// reply.sendFile or reply.download), zcopy sending the file: the guards, then
// for each root in turn the precompressed siblings, the file, its directory
// (redirect, index, listing), and otherwise Fastify's not-found handler.

const path = require('node:path')
const mime = require('mime-types')
const { DIRECTORY, acceptedCodings, codingNames, locateFile, resolvePath, spellingBelow, suffixOf } = require('../../http')
const { FST_STATIC_FORBIDDEN_PATH } = require('./errors')
const { isListRoute, listedDirectory, sendList } = require('./dir-list')
const { answerWithFile } = require('./reply')
const { isNonCanonical } = require('../raw-path')
const { hasInnerDotDot, redirectUrl } = require('./request-path')

// The siblings @fastify/static looks for, in the server's order of preference.
const CODINGS = codingNames(['br', 'gzip', 'deflate'])

// The coding to try next for `headers`, '*' counting as gzip; none tried yet in
// `checked`; undefined when none is acceptable.
function nextEncoding (headers, checked) {
  const header = headers['accept-encoding']
  if (header === undefined) return undefined
  const available = CODINGS.filter((coding) => !checked.has(coding))
  if (available.length === 0) return undefined
  return acceptedCodings(String(header).toLowerCase().replace(/\*/g, 'gzip'), available)[0]
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
const NO_CODING_LEFT = Symbol('no coding left') // sendSibling() found none to try

// The path allowedPath is asked about for the file finally chosen (an index
// file, a name with an extension added): as the request's path was written.
function finalPathname (selected, root, leadingSlash) {
  if (root === null) return selected
  const relative = path.relative(root, selected)
  if (relative === '..' || relative.startsWith('..' + path.sep) || path.isAbsolute(relative)) return undefined
  const posix = relative.split(path.sep).join('/')
  return leadingSlash ? '/' + posix : posix
}

// Answers a path as @fastify/static does. `handlerFor(root, callOptions)`
// gives the zcopy handler for a root; `opts` are the plugin's options,
// `prefix` its route prefix. One call's state (the request, its roots, the
// codings tried) is a plain object passed from step to step: `call`.
class PathSender {
  constructor ({ opts, prefix, handlerFor }) {
    this.opts = opts
    this.prefix = prefix
    this.handlerFor = handlerFor
    this.allowedPath = opts.allowedPath
  }

  // → Promise that answers `pathname` from `roots` (the plugin's, or a
  // sendFile call's; undefined: `pathname` is absolute). `how`: { offset (the
  // root tried), callOptions, checked (codings tried), spelling, allowed,
  // asked }.
  async send (request, reply, pathname, roots, how = {}) {
    const { offset = 0, callOptions, checked, spelling = Boolean(this.allowedPath), allowed = false } = how
    let root = roots === undefined ? undefined : [].concat(roots)[offset]
    if (root === undefined) {
      if (!path.isAbsolute(pathname)) return reply.callNotFound()
      root = null
    }
    if (hasInnerDotDot(pathname) || isNonCanonical(pathname)) return forbidden(reply)
    const normalized = pathname.startsWith('/') ? path.posix.normalize(pathname) : pathname
    if (this.allowedPath && !allowed && !this.allowedPath(normalized, root === null ? undefined : root, request)) return reply.callNotFound()
    const handler = this.handlerFor(root, callOptions)
    const options = handler.options
    const handlerRoot = root === null ? null : options.root
    // As @fastify/static: a URL's path (and, with allowedPath, the app's) is
    // served only as spelled on disk (see ../../http/target/spelling.js). The
    // request path's own spelling is checked while it is looked up.
    const asked = how.asked !== undefined ? how.asked : spelling && handlerRoot !== null ? askedSpelling(handlerRoot, pathname, options) : null
    const call = { request, reply, pathname, roots, offset, callOptions, checked, spelling, asked, root, handler, options, handlerRoot }
    if (this.opts.preCompressed) {
      const answered = await this.sendSibling(call)
      if (answered !== NO_CODING_LEFT) return answered
    }
    const found = await probe(handlerRoot, pathname, options, handler.lookUp)
    if (found.type !== 'error' && await this.misspelled(call, found)) return forbidden(reply)
    if (found.type === 'file') return this.sendFound(call, { found, sentPath: pathname })
    if (found.type === 'directory') return this.sendDirectory(call, found)
    return this.sendMissing(call, found.error)
  }

  // Whether what `found` names (with the suffix of `encoding`, a sibling's) is
  // spelled otherwise on disk than the request asked.
  async misspelled ({ spelling, handlerRoot, pathname, asked }, found, encoding) {
    if (!spelling || handlerRoot === null) return false
    let spelled = encoding ? found.path.slice(0, -suffixOf(encoding).length) : found.path
    if (found.type === 'file' && pathname.endsWith('/')) spelled = path.dirname(spelled)
    const answer = asked !== null && asked.path === path.resolve(spelled) ? asked.spelling : spellingBelow(handlerRoot, spelled)
    return (await answer) !== 'exact'
  }

  // The next precompressed sibling the request accepts: → Promise of the
  // answer, or of NO_CODING_LEFT when no coding is left to try.
  async sendSibling (call) {
    const { request, reply, pathname, handlerRoot, options, handler } = call
    const tried = call.checked || new Set()
    const encoding = nextEncoding(request.headers, tried)
    if (!encoding) return NO_CODING_LEFT
    let sentPath = pathname + suffixOf(encoding)
    if (pathname.endsWith('/')) {
      const index = await indexFileOf(handlerRoot, pathname, options.index, handler.lookUp)
      if (!index) return reply.callNotFound()
      sentPath = pathname + index + suffixOf(encoding)
    }
    const found = await probe(handlerRoot, sentPath, options, handler.lookUp)
    if (found.type === 'file' && await this.misspelled(call, found, encoding)) return forbidden(reply)
    tried.add(encoding)
    const next = () => this.retry(call, pathname, { checked: tried })
    // A sibling refused when opened (a link out of the root): the next coding.
    if (found.type === 'file') return this.sendFound(call, { found, sentPath, encoding, notFound: next })
    return next()
  }

  retry (call, nextPath, more) {
    const { request, reply, roots, offset, callOptions, checked, spelling, asked } = call
    return this.send(request, reply, nextPath, roots, { offset, callOptions, checked, spelling, asked, ...more })
  }

  // A directory: its listing, a redirect, its index, or not found.
  async sendDirectory (call, found) {
    const { request, reply, pathname, roots, offset, callOptions, spelling, handlerRoot, options, handler } = call
    if (this.opts.list) return this.sendList(reply, found.path, pathname)
    if (this.opts.redirect === true) return reply.redirect(redirectUrl(request.raw.url), 301)
    if (!pathname.endsWith('/') && await indexFileOf(handlerRoot, pathname, options.index, handler.lookUp)) {
      return this.send(request, reply, pathname + '/', roots, { offset, callOptions, spelling })
    }
    return reply.callNotFound()
  }

  // Nothing found (`err`): a listing the route names, the next root, not
  // found, or the error.
  sendMissing (call, err) {
    const { request, reply, pathname, roots, offset, callOptions, spelling, handlerRoot, options } = call
    const { list } = this.opts
    if (pathname.endsWith('/') && options.index.length === 0 && list) {
      const dir = listedDirectory(handlerRoot, pathname)
      if (dir) return this.sendList(reply, dir, pathname)
    }
    if (err.status !== 404) return reply.send(err)
    if (list && isListRoute(pathname, list)) {
      const dir = listedDirectory(handlerRoot, pathname)
      if (dir) return this.sendList(reply, dir, pathname)
    }
    if (roots !== undefined && offset < [].concat(roots).length - 1) {
      return this.send(request, reply, pathname, roots, { offset: offset + 1, callOptions, spelling })
    }
    return reply.callNotFound()
  }

  sendList (reply, dir, route) {
    const { opts } = this
    return sendList({ reply, dir, options: opts.list, route, prefix: this.prefix, dotfiles: opts.dotfiles })
  }

  // The file `found` (at `sentPath`: a precompressed sibling's, `encoding`,
  // whose `notFound` answers when it is not found once opened), with the
  // handler of the call that found it.
  async sendFound (call, { found, sentPath, encoding, notFound }) {
    const { request, reply, pathname, callOptions, handler } = call
    const { opts } = this
    const onFile = callOptions !== undefined && 'onFile' in callOptions ? callOptions.onFile : opts.onFile
    if (this.allowedPath && !this.allowedFinally(call, found, encoding)) return reply.callNotFound()
    if (onFile !== undefined) {
      if (typeof onFile !== 'function') throw new TypeError('onFile option must be a function')
      await onFile(found.path, found.stat)
    }
    const headers = {}
    if (encoding) {
      const typePath = pathname.endsWith('/') ? sentPath.slice(0, -suffixOf(encoding).length) : pathname
      if (opts.contentType !== false) headers['content-type'] = mime.contentType(path.extname(typePath)) || 'application/octet-stream'
      headers['content-encoding'] = encoding
    }
    const file = path.relative(handler.options.root, found.path)
    return answerWithFile(handler, request, reply, file, { headers, vary: Boolean(opts.preCompressed), contentType: opts.contentType, stat: found.stat, notFound })
  }

  // Whether allowedPath allows the file finally chosen, asked about as the
  // request's path was written when it is another than that path.
  allowedFinally ({ request, pathname, root }, found, encoding) {
    const asked = pathname.startsWith('/') ? path.posix.normalize(pathname) : pathname
    const selected = encoding && found.path.endsWith(suffixOf(encoding)) ? found.path.slice(0, -suffixOf(encoding).length) : found.path
    const final = finalPathname(selected, root, asked.startsWith('/'))
    return final !== undefined && (final === asked || this.allowedPath(final, root === null ? undefined : root, request))
  }
}

// → the function (request, reply, pathname, roots, how) → Promise that answers
// (PathSender's send()).
function pathSender (settings) {
  const sender = new PathSender(settings)
  return (request, reply, pathname, roots, how) => sender.send(request, reply, pathname, roots, how)
}

module.exports = { pathSender }
