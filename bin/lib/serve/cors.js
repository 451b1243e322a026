'use strict'

// --cors: any origin may read these files. Every response says so, with the
// headers a script needs for ranges and caching exposed; a preflight (OPTIONS
// with Access-Control-Request-Method) is answered 204 here.

const EXPOSED = 'Accept-Ranges, Content-Encoding, Content-Length, Content-Range, ETag, Last-Modified'

// → true when the request was a preflight and has been answered.
function applyCors (req, res) {
  res.setHeader('Access-Control-Allow-Origin', '*')
  res.setHeader('Access-Control-Expose-Headers', EXPOSED)
  if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return false
  res.statusCode = 204
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS')
  const asked = req.headers['access-control-request-headers']
  if (asked) res.setHeader('Access-Control-Allow-Headers', asked)
  res.setHeader('Access-Control-Max-Age', '86400')
  res.setHeader('Content-Length', '0')
  res.end()
  return true
}

module.exports = { applyCors }
