'use strict'

// Conditional requests (RFC 9110 §13), evaluated as send evaluates them, against
// the validators already on the response (ours, or the application's).

const fresh = require('fresh')

function httpDate (value) {
  const time = value ? Date.parse(value) : NaN
  return typeof time === 'number' ? time : NaN
}

function tokens (list) {
  return list.split(',').map((token) => token.trim()).filter((token) => token !== '')
}

function isConditional (req) {
  const { headers } = req
  return Boolean(headers['if-match'] || headers['if-unmodified-since'] ||
    headers['if-none-match'] || headers['if-modified-since'])
}

// If-Match / If-Unmodified-Since failed: 412.
function preconditionFailed (req, res) {
  const match = req.headers['if-match']
  if (match) {
    const etag = res.getHeader('ETag')
    return !etag || (match !== '*' && tokens(match).every((tag) =>
      tag !== etag && tag !== 'W/' + etag && 'W/' + tag !== etag))
  }
  const unmodifiedSince = httpDate(req.headers['if-unmodified-since'])
  if (Number.isNaN(unmodifiedSince)) return false
  const lastModified = httpDate(res.getHeader('Last-Modified'))
  return Number.isNaN(lastModified) || lastModified > unmodifiedSince
}

// If-None-Match / If-Modified-Since say the client's copy is current: 304.
function notModified (req, res) {
  const cacheable = (res.statusCode >= 200 && res.statusCode < 300) || res.statusCode === 304
  return cacheable && fresh(req.headers, {
    etag: res.getHeader('ETag'),
    'last-modified': res.getHeader('Last-Modified')
  })
}

// What a body is, for If-Range: the file as it is, a precompressed sibling (a
// file of its own, sent with Content-Encoding), or a compressed variant made by
// zcopy (whose Last-Modified is its source's, not its own).
const BODY = Object.freeze({ FILE: 'file', SIBLING: 'sibling', VARIANT: 'variant' })

// An If-Range entity-tag: `"…"` or `W/"…"`; anything else is taken as a date.
function isEntityTag (value) {
  return value.startsWith('"') || value.startsWith('W/"')
}

// If-Range (RFC 9110 §13.1.5): may the Range header be honoured for the body on
// `res`, a BODY? An entity-tag must be the response's ETag, the whole value
// (send took any header that contained it). For an encoded body (sibling,
// variant) only a strong one equal to a strong ETag does (strong comparison):
// two encodings of one file can share a weak ETag and differ in bytes. For the
// file itself a weak one equal to the ETag does too, as with send: the ETags the
// drop-in makes are all weak (size and mtime, as send's). A date must equal
// Last-Modified, which must be a strong validator: at least a second older than
// the response (§8.8.2.2), the file not changed twice within its second; a
// variant's Last-Modified is its source's, never a validator of its bytes.
function rangeFresh (req, res, body = BODY.FILE) {
  const ifRange = req.headers['if-range']
  if (!ifRange) return true
  if (isEntityTag(ifRange)) {
    const etag = res.getHeader('ETag')
    if (ifRange !== etag) return false
    return body === BODY.FILE || !ifRange.startsWith('W/')
  }
  if (body === BODY.VARIANT) return false
  const lastModified = httpDate(res.getHeader('Last-Modified'))
  return lastModified === httpDate(ifRange) && lastModified <= Date.now() - 1000
}

module.exports = { BODY, isConditional, notModified, preconditionFailed, rangeFresh }
