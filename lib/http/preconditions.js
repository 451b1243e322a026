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

// If-Range: may the Range header be honoured for this representation?
function rangeFresh (req, res) {
  const ifRange = req.headers['if-range']
  if (!ifRange) return true
  if (ifRange.includes('"')) {
    const etag = res.getHeader('ETag')
    return Boolean(etag && ifRange.includes(etag))
  }
  return httpDate(res.getHeader('Last-Modified')) <= httpDate(ifRange)
}

module.exports = { isConditional, notModified, preconditionFailed, rangeFresh }
