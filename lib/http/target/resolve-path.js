'use strict'

// Turns a request path into a filesystem path that cannot leave its root: NUL
// bytes are refused (400), any `..` segment (either slash) is refused (403) before
// joining, and the dotfiles policy is applied to every segment.

const path = require('node:path')
const { httpError } = require('../common')

const UP_PATH = /(?:^|[\\/])\.\.(?:[\\/]|$)/

// decodeURIComponent, with malformed percent-encoding as a 400.
function decodePathname (pathname) {
  try {
    return decodeURIComponent(pathname)
  } catch {
    throw httpError(400) // as send: a BadRequestError, not the URIError
  }
}

function isDotfile (segment) {
  return segment.length > 1 && segment[0] === '.'
}

function applyDotfilesPolicy (segments, policy) {
  if (policy === 'allow' || !segments.some(isDotfile)) return
  throw httpError(policy === 'deny' ? 403 : 404)
}

// `relative` is a decoded path below `root` (leading slash or not), or an absolute
// path when `root` is null. Returns the absolute path (ending with a slash when the
// decoded path does, as send joins it) and whether a directory was asked for: a
// trailing slash in the path as the request wrote it (`trailingSlash`, default: the
// decoded one's), so '/dir%2f' is not '/dir/' (send judges the undecoded path).
// An empty `relative` (a request for a mount point itself) is the root itself: a
// directory (redirected to) or, when the root is a file, that file.
function resolvePath (root, relative, dotfiles, trailingSlash = relative.endsWith('/')) {
  if (relative.includes('\0')) throw httpError(400)
  if (relative === '' && root !== null) return { path: root, trailingSlash: false }
  const normalized = root === null ? path.normalize(relative) : path.normalize('.' + path.sep + relative)
  if (UP_PATH.test(normalized)) throw httpError(403)
  applyDotfilesPolicy(normalized.split(path.sep), dotfiles)
  return {
    path: root === null ? path.resolve(normalized) : path.join(root, normalized),
    trailingSlash
  }
}

// decodePathname + resolvePath for one root and dotfiles policy, remembering its
// answers for the last `max` distinct pathnames (a server sees the same few again
// and again; a flood of new ones only restarts the memory). The answers are frozen:
// they are shared by every request for that pathname.
function pathResolver (root, dotfiles, max = 1024) {
  const known = new Map()
  return (pathname) => {
    let resolved = known.get(pathname)
    if (resolved === undefined) {
      resolved = Object.freeze(resolvePath(root, decodePathname(pathname), dotfiles, pathname.endsWith('/')))
      if (known.size >= max) known.clear()
      known.set(pathname, resolved)
    }
    return resolved
  }
}

module.exports = { pathResolver, resolvePath }
