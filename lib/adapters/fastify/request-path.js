'use strict'

// From a request's raw URL to the path below the static route's prefix, with the
// guards @fastify/static puts before any file lookup. A path that normalises to
// something else ('/a/../deep/x', '/./deep/x', '//deep/x', '/a%2f..%2fdeep/x', a
// backslash) is refused (403) instead of normalised (see ../raw-path.js).

const { isNonCanonical } = require('../raw-path')

const DOT_DOT_SEGMENT = /(?:^|[\\/])\.\.(?:[\\/]|$)/
const LEADING_DOT_DOT_SEGMENT = /^\/?\.\.(?:[\\/]|$)/
const ENCODED_HASH_OR_QUESTION_MARK = /%(?:23|3f)/gi
const FORBIDDEN = null

// A non-leading '..' segment: normalisation would remove it, so a file is named by
// a path a route guard never saw.
function hasInnerDotDot (pathname) {
  return DOT_DOT_SEGMENT.test(pathname) && !LEADING_DOT_DOT_SEGMENT.test(pathname)
}

// decodeURI, with '#' and '?' decoded too (a file may have them in its name);
// neither is '%', so this still decodes once. Unlike ../../http/resolve-path.js's
// decodePathname (decodeURIComponent), the other reserved characters stay
// escaped: '%2f' is no separator here. Throws URIError on bad escapes.
function decodeKeepingReserved (pathname) {
  return decodeURI(pathname.replace(ENCODED_HASH_OR_QUESTION_MARK, decodeURIComponent))
}

// The route's prefix ('/app/:version/' of '/app/:version/*') as tokens: literal
// strings, and undefined for a parameter (one non-empty segment).
function prefixTokens (prefix) {
  const tokens = []
  let start = 0
  let i = 0
  while (i < prefix.length) {
    if (prefix[i] !== ':') {
      i++
      continue
    }
    if (start !== i) tokens.push(prefix.slice(start, i))
    while (i < prefix.length && prefix[i] !== '/') i++
    tokens.push(undefined)
    start = i
  }
  if (start !== prefix.length) tokens.push(prefix.slice(start))
  return tokens
}

// → (url, end) → the length of url's prefix the route matched, or undefined.
function prefixMatcher (routeUrl) {
  const prefix = routeUrl.replace(/\*$/, '')
  if (prefix === '/') return () => 0
  if (!prefix.includes(':')) {
    return (url, end) => prefix.length <= end && url.startsWith(prefix) ? prefix.length : undefined
  }
  const tokens = prefixTokens(prefix)
  return (url, end) => {
    let at = 0
    for (const token of tokens) {
      if (token === undefined) {
        const segmentStart = at
        const slash = url.indexOf('/', at)
        at = slash === -1 || slash > end ? end : slash
        if (at === segmentStart) return undefined
        continue
      }
      if (at + token.length > end || !url.startsWith(token, at)) return undefined
      at += token.length
    }
    return at
  }
}

// → the decoded path below the prefix ('/' at least), FORBIDDEN (null) for a path
// to refuse with 403, or undefined for one that is not found (the raw URL does not
// start with the prefix as written, or malformed percent-encoding).
function pathBelowPrefix (url, matchPrefix) {
  const question = url.indexOf('?')
  const end = question === -1 ? url.length : question
  const prefixLength = matchPrefix(url, end)
  if (prefixLength === undefined) return undefined
  let pathname = url.slice(prefixLength, end)
  if (pathname === '') pathname = '/'
  else if (!pathname.startsWith('/')) pathname = '/' + pathname
  let decodedUrl, decoded
  try {
    decodedUrl = decodeKeepingReserved(url.slice(0, end))
    decoded = decodeKeepingReserved(pathname)
  } catch {
    return undefined
  }
  // The whole path is checked too: a route parameter can take a '..' segment.
  if (DOT_DOT_SEGMENT.test(decodedUrl) && !LEADING_DOT_DOT_SEGMENT.test(decoded)) return FORBIDDEN
  if (isNonCanonical(decoded) || isNonCanonical(decodedUrl)) return FORBIDDEN
  return decoded
}

// The directory URL to redirect `url` to: leading slashes and backslashes made
// one slash (never a scheme-relative '//host'), a trailing slash added, the
// query kept.
function redirectUrl (url) {
  let i = 0
  while (i < url.length && (url[i] === '/' || url[i] === '\\')) i++
  const parsed = new URL('/' + url.slice(i), 'http://localhost.com/')
  const pathname = parsed.pathname
  return pathname + (pathname.endsWith('/') ? '' : '/') + parsed.search
}

module.exports = { FORBIDDEN, hasInnerDotDot, pathBelowPrefix, prefixMatcher, redirectUrl }
