'use strict'

// serve-static's directory redirect: /dir → 301 /dir/ (query and fragment kept), with the
// small HTML body and security headers it sends; never to another host.

const encodeUrl = require('encodeurl')
const escapeHtml = require('escape-html')
const { splitUrl } = require('./request-url')

// A base no request can name: where a browser would take a Location is read off
// new URL(location, base), as WHATWG URL parsers (browsers, fetch, Node) read it.
const PROBE = new URL('http://host.invalid/')

// '//evil.example/x' must not become a protocol-relative Location.
function collapseLeadingSlashes (pathname) {
  let i = 0
  while (pathname.charCodeAt(i) === 0x2f /* / */) i++
  return i > 1 ? '/' + pathname.slice(i) : pathname
}

function htmlDocument (title, body) {
  return '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    `<title>${title}</title>\n</head>\n<body>\n<pre>${body}</pre>\n</body>\n</html>\n`
}

// Whether a browser following `location` stays on this host, on a path that
// does not itself read as a host ('/\\evil.example/', '/.//evil.example/' and
// the like are '//evil.example/' once backslashes and dot segments are resolved,
// which a page linking to it relatively, or a second redirect, takes off-site).
function staysHere (location) {
  let resolved
  try {
    resolved = new URL(location, PROBE)
  } catch {
    return false
  }
  return resolved.host === PROBE.host && !resolved.pathname.startsWith('//')
}

// The Location of the directory redirect for `url`, the request's original URL
// (before any mount path was stripped), or null when none is safe to send. The
// slash goes after the path as the request wrote it ('/dir%2f' → '/dir%2f/'),
// and what follows the path, query and even a fragment a raw client sent, is
// kept as serve-static keeps it.
function directoryLocation (url) {
  const { pathname, rest } = splitUrl(url)
  if (pathname === null) return null
  const location = encodeUrl(collapseLeadingSlashes(pathname + '/') + rest)
  return staysHere(location) ? location : null
}

// Answers 301 to `location` (from directoryLocation).
function redirectToDirectory (res, location) {
  const body = htmlDocument('Redirecting', 'Redirecting to ' + escapeHtml(location))
  res.statusCode = 301
  res.setHeader('Content-Type', 'text/html; charset=UTF-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Content-Security-Policy', "default-src 'none'")
  res.setHeader('X-Content-Type-Options', 'nosniff')
  res.setHeader('Location', location)
  res.end(body)
}

module.exports = { directoryLocation, redirectToDirectory }
