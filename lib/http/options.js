'use strict'

// The options sendFile and serveStatic share, checked once and turned into the
// values the per-request code reads. Names and defaults are send's / serve-static's.

const path = require('node:path')
const ms = require('ms')
const { compressOptions } = require('./compress')
const { precompressedEncodings } = require('./representation')

const MAX_MAX_AGE = 365 * 24 * 60 * 60 * 1000 // one year, as send caps it
const DOTFILES = ['allow', 'deny', 'ignore']

function list (value, name) {
  const items = [].concat(value || [])
  for (const item of items) {
    if (typeof item !== 'string') throw new TypeError(`${name} option must be array of strings or false`)
  }
  return items
}

// Milliseconds, from a number or an ms-style string ('1d'), clamped to [0, 1 year].
function maxAgeMs (value) {
  const millis = typeof value === 'string' ? ms(value) : Number(value)
  return typeof millis !== 'number' || Number.isNaN(millis) ? 0 : Math.min(Math.max(0, millis), MAX_MAX_AGE)
}

function cacheControlValue (options) {
  if (options.cacheControl === false) return null
  const seconds = Math.floor(maxAgeMs(options.maxAge || options.maxage || 0) / 1000)
  return `public, max-age=${seconds}${options.immutable ? ', immutable' : ''}`
}

function normalizeOptions (options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object')
  const dotfiles = options.dotfiles === undefined ? 'ignore' : options.dotfiles
  if (!DOTFILES.includes(dotfiles)) throw new TypeError('dotfiles option must be "allow", "deny", or "ignore"')
  if (options.setHeaders !== undefined && typeof options.setHeaders !== 'function') {
    throw new TypeError('option setHeaders must be function')
  }
  if (options.onSent !== undefined && typeof options.onSent !== 'function') {
    throw new TypeError('option onSent must be function')
  }
  if (options.root !== undefined && typeof options.root !== 'string') throw new TypeError('root option must be a string')

  return Object.freeze({
    root: options.root === undefined ? null : path.resolve(options.root),
    acceptRanges: options.acceptRanges !== false,
    cacheControl: cacheControlValue(options),
    contentType: options.contentType !== false,
    dotfiles,
    etag: options.etag !== false,
    extensions: options.extensions === undefined ? [] : list(options.extensions, 'extensions'),
    index: options.index === undefined ? ['index.html'] : list(options.index, 'index'),
    lastModified: options.lastModified !== false,
    precompressed: precompressedEncodings(options.precompressed),
    compress: compressOptions(options.compress),
    allowSymlinksOutsideRoot: Boolean(options.allowSymlinksOutsideRoot),
    setHeaders: options.setHeaders || null,
    onSent: options.onSent || null
  })
}

module.exports = { normalizeOptions }
