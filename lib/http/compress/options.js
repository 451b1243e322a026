'use strict'

// The `compress` option → false, or the frozen settings a VariantStore runs
// with. `true` means the defaults; an object overrides some of them. Bad values
// throw a TypeError (wrong kind) or a RangeError (out of range) at creation,
// in the style of every option's (../bad-option.js).

const os = require('node:os')
const path = require('node:path')
const { ENCODED, encodesHere } = require('./encoders')
const { typeFilter } = require('./types')
const { badOption } = require('../common')
const { codingNames } = require('../representation')

// The codings compress makes, in the server's order of preference (the table
// of codings': br first, the smallest; zstd before gzip), and those of them
// this Node can make.
const ENCODABLE = codingNames(ENCODED)
const AVAILABLE = Object.freeze(ENCODABLE.filter(encodesHere))

const DEFAULTS = Object.freeze({
  threshold: 1024, // no gain below ~1 KiB: headers and framing eat it
  maxSize: 8 * 1024 * 1024, // above this the file is sent as it is
  cacheBytes: 256 * 1024 * 1024, // bytes of variants on disk
  concurrency: 1, // compressions at once, each in a compression process or thread
  cpuBudget: 10_000 // ms of compression CPU per minute, per store (./cpu-budget.js)
})

const KEYS = new Set(['encodings', 'types', 'threshold', 'maxSize', 'cacheDir', 'cacheBytes', 'concurrency', 'cpuBudget'])

// The per-user default cache folder, in the system's temp folder.
function defaultCacheDir () {
  const user = typeof process.getuid === 'function' ? process.getuid() : os.userInfo().username
  return path.join(os.tmpdir(), `zcopy-variants-${user}`)
}

const quoted = (names) => names.map((name) => `'${name}'`).join(', ')

// A whole number of at least `min`: a TypeError for another kind, a RangeError below.
function size (value, name, fallback, min) {
  if (value === undefined) return fallback
  const mustBe = `an integer of at least ${min}`
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw badOption(`compress.${name}`, mustBe, value)
  if (value < min) throw badOption(`compress.${name}`, mustBe, value, RangeError)
  return value
}

function encodingsOf (value) {
  if (value === undefined) return AVAILABLE
  const mustBe = `an array of ${quoted(ENCODABLE)}`
  if (!Array.isArray(value) || value.some((encoding) => typeof encoding !== 'string')) throw badOption('compress.encodings', mustBe, value)
  if (!value.every((encoding) => ENCODABLE.includes(encoding))) throw badOption('compress.encodings', mustBe, value, RangeError)
  // zstd where this Node's zlib has it: asked for elsewhere, it is left out.
  const chosen = AVAILABLE.filter((encoding) => value.includes(encoding))
  if (chosen.length === 0) throw badOption('compress.encodings', `an array naming one of ${quoted(AVAILABLE)} (those this Node can make)`, value, RangeError)
  return Object.freeze(chosen)
}

const functionIds = new WeakMap()
function functionId (fn) {
  if (!functionIds.has(fn)) functionIds.set(fn, `fn${++functionId.count}`)
  return functionIds.get(fn)
}
functionId.count = 0

function compressOptions (value) {
  if (value === undefined || value === false || value === null) return false
  if (value === true) value = {}
  if (typeof value !== 'object' || Array.isArray(value)) throw badOption('compress', 'a boolean or an object', value)
  for (const key of Object.keys(value)) {
    if (!KEYS.has(key)) throw badOption(`compress.${key}`, `left out (the settings are ${[...KEYS].join(', ')})`, value[key])
  }
  const cacheDir = value.cacheDir === undefined ? defaultCacheDir() : value.cacheDir
  if (cacheDir !== false && (typeof cacheDir !== 'string' || cacheDir === '')) throw badOption('compress.cacheDir', 'a path or false', cacheDir)
  const threshold = size(value.threshold, 'threshold', DEFAULTS.threshold, 0)
  const maxSize = size(value.maxSize, 'maxSize', DEFAULTS.maxSize, 1)
  if (maxSize < threshold) throw badOption('compress.maxSize', `at least options.compress.threshold (${threshold})`, maxSize, RangeError)
  return Object.freeze({
    encodings: encodingsOf(value.encodings),
    types: typeFilter(value.types),
    threshold,
    maxSize,
    cacheDir: cacheDir === false ? false : path.resolve(cacheDir),
    cacheBytes: size(value.cacheBytes, 'cacheBytes', DEFAULTS.cacheBytes, 0),
    concurrency: size(value.concurrency, 'concurrency', DEFAULTS.concurrency, 1),
    cpuBudget: size(value.cpuBudget, 'cpuBudget', DEFAULTS.cpuBudget, 1),
    // What identifies these settings, for sharing one store between sendFile calls.
    signature: JSON.stringify([value.encodings, value.threshold, value.maxSize, cacheDir, value.cacheBytes, value.concurrency, value.cpuBudget,
      typeof value.types === 'function' ? functionId(value.types) : value.types])
  })
}

module.exports = { AVAILABLE, DEFAULTS, compressOptions, defaultCacheDir }
