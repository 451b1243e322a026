'use strict'

// serve-static's directory redirect: /dir → 301 /dir/ (query and fragment kept), with the
// small HTML body and security headers it sends.

const encodeUrl = require('encodeurl')
const escapeHtml = require('escape-html')
const { splitUrl } = require('./request-url')

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

// `url` is the request's original URL (before any mount path was stripped). The
// slash goes after the path as the request wrote it ('/dir%2f' → '/dir%2f/'), and
// what follows the path, query and even a fragment a raw client sent, is kept as
// serve-static keeps it.
function redirectToDirectory (res, url) {
  const { pathname } = splitUrl(url)
  const location = encodeUrl(collapseLeadingSlashes(pathname + '/') + url.slice(pathname.length))
  const body = htmlDocument('Redirecting', 'Redirecting to ' + escapeHtml(location))
  res.statusCode = 301
  res.setHeader('Content-Type', 'text/html; charset=UTF-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Content-Security-Policy', "default-src 'none'")
  res.setHeader('X-Content-Type-Options', 'nosniff')
  res.setHeader('Location', location)
  res.end(body)
}

module.exports = { redirectToDirectory }
