'use strict'

// Every response header rule for a file, in one place. As send does, a header the
// application already set (res.setHeader before us, or in `setHeaders`) wins.
// Values that depend only on the file are computed once per file version: kept
// on its open-file cache entry (one entry is one version of one file).

const path = require('node:path')
const etag = require('etag')
const mime = require('mime-types')

const contentTypes = new Map() // extension → Content-Type

function contentTypeOf (file) {
  const extension = path.extname(file)
  let type = contentTypes.get(extension)
  if (type === undefined) {
    type = mime.contentType(extension) || 'application/octet-stream'
    contentTypes.set(extension, type)
  }
  return type
}

// Header values per open-file cache entry, computed on its first response and
// kept while the entry lives (this module's own data, keyed by the entry).
const valuesByEntry = new WeakMap()

// { typePath, contentType, etag, lastModified } of the entry `file`, its type
// named by `typePath`.
function valuesOf (file, typePath) {
  let values = valuesByEntry.get(file)
  if (values === undefined || values.typePath !== typePath) {
    const { stat } = file
    values = { typePath, contentType: contentTypeOf(typePath), etag: etag(stat), lastModified: stat.mtime.toUTCString() }
    valuesByEntry.set(file, values)
  }
  return values
}

// `present`: the lower-case names of the headers already on the response
// (res.getHeaderNames(), read once: a hasHeader() per name costs a lower-casing
// and a dictionary lookup each). `lowerName` is `name` in lower case.
function setDefault (res, present, name, lowerName, value) {
  if (!present.includes(lowerName)) res.setHeader(name, value)
}

function appendVary (res, field) {
  const current = res.getHeader('Vary')
  if (current === undefined || current === '') return res.setHeader('Vary', field)
  const fields = String(current).toLowerCase().split(/\s*,\s*/)
  if (!fields.includes('*') && !fields.includes(field.toLowerCase())) res.setHeader('Vary', `${current}, ${field}`)
}

// `file` is what is sent: the open-file cache's entry ({ path, stat, headers }) of
// the file itself or of its precompressed sibling, `typePath` the name the
// Content-Type comes from, `encoding` the sibling's Content-Encoding (or null),
// `vary` whether the path has precompressed siblings, `sourceStat` the stat
// setHeaders hears when `file` is not the file itself but a compressed variant
// of it (null: `file`'s). setHeaders(res, path, stat) hears the file's path and
// the file's stat, as from express.static: a variant's entry has its own size
// (and, on disk, its own inode and mtime), which an application setting
// Last-Modified or a length from the stat must not see.
// `Vary: Accept-Encoding` goes on every response for a path with siblings, on
// none for a path without. → the lower-case names of the headers that were on
// `res` before these (the application's), for setContentLength().
// `values`: a compressed variant's own header values (its ETag and date are
// the file's), else null: those of `file`, the cache entry sent. `tag`: the
// ETag to send instead of theirs (a content ETag, ./content-tag.js), or null.
function setFileHeaders (res, { file, typePath, encoding, vary, sourceStat = null, values = null, tag = null }, options) {
  if (options.setHeaders !== null) options.setHeaders(res, typePath, sourceStat === null ? file.stat : sourceStat)
  const present = res.getHeaderNames()
  if (options.acceptRanges) setDefault(res, present, 'Accept-Ranges', 'accept-ranges', 'bytes')
  if (options.cacheControl !== null) setDefault(res, present, 'Cache-Control', 'cache-control', options.cacheControl)
  if (values === null) values = valuesOf(file, typePath)
  if (options.lastModified) setDefault(res, present, 'Last-Modified', 'last-modified', values.lastModified)
  if (options.etag) setDefault(res, present, 'ETag', 'etag', tag === null ? values.etag : tag)
  if (options.contentType) setDefault(res, present, 'Content-Type', 'content-type', values.contentType)
  if ((options.precompressed || options.compress) && (encoding !== null || vary)) {
    appendVary(res, 'Accept-Encoding')
  }
  if (encoding !== null) res.setHeader('Content-Encoding', encoding)
  return present
}

// The body's length, unless the application chose Transfer-Encoding itself: a
// message must not carry both (RFC 9112, 6.2), and Node frames the body then.
// `present`: what setFileHeaders() returned. Set as a string, the form it takes
// on the wire (Node checks a number's characters on a slower path).
function setContentLength (res, present, length) {
  if (!present.includes('transfer-encoding')) res.setHeader('Content-Length', String(length))
}

// A 304 describes no body: drop the headers that would describe one.
function removeContentHeaders (res) {
  for (const name of ['Content-Encoding', 'Content-Language', 'Content-Length', 'Content-Range', 'Content-Type']) {
    res.removeHeader(name)
  }
}

function contentRange (size, range) {
  return range === undefined ? `bytes */${size}` : `bytes ${range.start}-${range.end}/${size}`
}

module.exports = { contentRange, contentTypeOf, removeContentHeaders, setContentLength, setFileHeaders }
