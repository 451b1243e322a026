'use strict'

// The one options normalizer: serveStatic, sendFile, zcopy/koa and zcopy/fastify
// (through createStaticHandler) all hand their options here. Each option is
// checked once, a bad one reported as ./bad-option says, and the result is
// frozen plain data (values and the caller's functions), the values the
// per-request code reads. Names and defaults are send's / serve-static's.
// The `compress` settings and the `precompressed` codings are checked by their
// owners (./compress, ./representation) in the same style.

const path = require('node:path')
const ms = require('ms')
const { badOption } = require('../common')
const { compressOptions } = require('../compress')
const { defaultMaxOpenFiles } = require('../files')
const { precompressedEncodings } = require('../representation')

const MAX_MAX_AGE = 365 * 24 * 60 * 60 * 1000 // one year, as send caps it
const DOTFILES = ['allow', 'deny', 'ignore']
const DEFAULT_MAX_OPEN_FILES = defaultMaxOpenFiles()
const DEFAULT_MEMORY_CACHE = 32 * 1024 * 1024
// inotify watches are a per-user budget (fs.inotify.max_user_watches) that
// editors, bundlers and other servers share: past this many directories, files
// are checked by a stat per request instead.
const DEFAULT_MAX_WATCHES = 1024

// extensions / index: a string, an array of strings, or a falsy value (none).
function list (value, name) {
  const items = [].concat(value || [])
  if (items.some((item) => typeof item !== 'string')) throw badOption(name, 'a string, an array of strings or false', value)
  return Object.freeze(items)
}

// Milliseconds, from a number or an ms-style string ('1d'), clamped to [0, 1
// year]; anything else is 0. Never refused: send and serve-static take any value.
function maxAgeMs (value) {
  const millis = typeof value === 'string' ? ms(value) : Number(value)
  return typeof millis !== 'number' || Number.isNaN(millis) ? 0 : Math.min(Math.max(0, millis), MAX_MAX_AGE)
}

function cacheControlValue (options) {
  if (options.cacheControl === false) return null
  const seconds = Math.floor(maxAgeMs(options.maxAge || options.maxage || 0) / 1000)
  return `public, max-age=${seconds}${options.immutable ? ', immutable' : ''}`
}

function optionalFunction (options, name) {
  const value = options[name]
  if (value === undefined) return null
  if (typeof value !== 'function') throw badOption(name, 'a function', value)
  return value
}

// options[name], a non-negative integer (a safe one unless `isWhole` says
// Number.isInteger), or `fallback`.
function nonNegative (options, name, fallback, isWhole = Number.isSafeInteger) {
  const value = options[name] === undefined ? fallback : options[name]
  if (!isWhole(value) || value < 0) throw badOption(name, 'a non-negative integer', value)
  return value
}

// true (the default: a weak ETag of size and mtime), false (none) or
// 'content' (one of the bytes, see ./representation/content-tag.js). Any other
// value is taken as serve-static takes it, on when truthy (`etag: 0` and
// `null` turn it off), but a string: one that is not 'content' is a mode
// mistyped, refused rather than taken for the weak ETag.
function etagOf (value) {
  if (value === undefined) return true
  if (typeof value === 'string' && value !== 'content') throw badOption('etag', "true, false or 'content'", value)
  return value === 'content' ? value : Boolean(value)
}

function dotfilesOf (value) {
  if (value === undefined) return 'ignore'
  if (!DOTFILES.includes(value)) throw badOption('dotfiles', "'allow', 'deny' or 'ignore'", value)
  return value
}

// `given`: the caller's options (undefined and null: the defaults). `root`:
// the root the entry point was given as an argument (serveStatic(root)), which
// wins over options.root.
function normalizeOptions (given, root) {
  if (given !== undefined && given !== null && typeof given !== 'object') throw badOption('', 'an object', given)
  const options = given || {}
  const rootPath = root === undefined ? options.root : root
  if (rootPath !== undefined && typeof rootPath !== 'string') throw badOption('root', 'a string', rootPath)
  return Object.freeze({
    root: rootPath === undefined ? null : path.resolve(rootPath),
    acceptRanges: options.acceptRanges !== false,
    cacheControl: cacheControlValue(options),
    contentType: options.contentType !== false,
    dotfiles: dotfilesOf(options.dotfiles),
    etag: etagOf(options.etag),
    extensions: list(options.extensions, 'extensions'),
    index: options.index === undefined ? Object.freeze(['index.html']) : list(options.index, 'index'),
    lastModified: options.lastModified !== false,
    precompressed: precompressedEncodings(options.precompressed),
    compress: compressOptions(options.compress),
    allowSymlinksOutsideRoot: Boolean(options.allowSymlinksOutsideRoot),
    setHeaders: optionalFunction(options, 'setHeaders'),
    onSent: optionalFunction(options, 'onSent'),
    onReplayable: optionalFunction(options, 'onReplayable'),
    fallthrough: options.fallthrough !== false,
    redirect: options.redirect !== false,
    // The open-file cache's (./stack.js): serveStatic's and the adapters'; all
    // sendFile calls share one cache of their own.
    maxOpenFiles: nonNegative(options, 'maxOpenFiles', DEFAULT_MAX_OPEN_FILES, Number.isInteger),
    memoryCache: nonNegative(options, 'memoryCache', DEFAULT_MEMORY_CACHE),
    maxWatches: nonNegative(options, 'maxWatches', DEFAULT_MAX_WATCHES)
  })
}

module.exports = { normalizeOptions }
