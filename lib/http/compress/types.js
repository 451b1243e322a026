'use strict'

// Which files `compress` makes compressed variants of, by their media type (the
// one their Content-Type comes from). The default list is text and the binary
// formats that are not compressed already; it is overridable with the `types`
// option: patterns ('text/*', 'application/*+json', an exact type) or a
// function of the type. mime-db's own `compressible` flag is not used: it marks
// application/octet-stream (every unknown extension) compressible too.

const path = require('node:path')
const mime = require('mime-types')
const { badOption } = require('../common')

const DEFAULT_TYPES = Object.freeze([
  'text/*',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/json',
  'application/*+json',
  'application/xml',
  'application/*+xml',
  'application/wasm',
  'application/x-ndjson',
  'application/vnd.ms-fontobject',
  'image/svg+xml',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/bmp',
  'font/ttf',
  'font/otf',
  'font/collection'
])

const PATTERN = /^[a-z0-9!#$&^_.+-]+\/(\*|\*?[a-z0-9!#$&^_.+-]+)$/

// A pattern → a test of a lower-case type: 'text/*', 'application/*+json', or a type.
function testOf (pattern) {
  const [top, sub] = pattern.split('/')
  if (sub === '*') return (type) => type.startsWith(top + '/')
  if (sub.startsWith('*')) {
    const suffix = sub.slice(1)
    return (type) => type.startsWith(top + '/') && type.endsWith(suffix)
  }
  return (type) => type === pattern
}

// The `types` option → a function (media type → boolean). Throws a TypeError.
function typeFilter (value) {
  if (value === undefined) value = DEFAULT_TYPES
  if (typeof value === 'function') return (type) => Boolean(value(type))
  if (!Array.isArray(value)) throw badOption('compress.types', 'an array of media types or a function', value)
  const tests = value.map((pattern, i) => {
    if (typeof pattern !== 'string' || !PATTERN.test(pattern.toLowerCase())) {
      throw badOption(`compress.types[${i}]`, "a media type or a pattern ('text/*', 'application/*+json')", pattern)
    }
    return testOf(pattern.toLowerCase())
  })
  return (type) => tests.some((test) => test(type))
}

// → a function (file path → boolean), memoised per extension.
function compressibleByName (filter) {
  const known = new Map()
  return (file) => {
    const extension = path.extname(file).toLowerCase()
    let yes = known.get(extension)
    if (yes === undefined) {
      const type = mime.lookup(extension)
      yes = type !== false && filter(type)
      if (known.size < 1024) known.set(extension, yes)
    }
    return yes
  }
}

module.exports = { DEFAULT_TYPES, compressibleByName, typeFilter }
