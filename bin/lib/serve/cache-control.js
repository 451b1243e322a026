'use strict'

// --max-age and --immutable → Cache-Control. Names that carry a content hash
// (app.3f2a1b9c.js from webpack, index-BQ2x8Kf1.js from Vite/Rollup) change
// whenever their content does, so with --immutable they are cached for a year
// and never revalidated; every other file gets --max-age.

const path = require('node:path')

const YEAR = 365 * 24 * 60 * 60
// A part of 8 or more letters, digits or _ between '.' or '-' and the extension,
// with a digit in it, or mixed case (Rollup's base64url hashes may have no digit).
const HASH_PART = /[.-]([A-Za-z0-9_]{8,})\.[A-Za-z0-9]+$/

function isHashedName (file) {
  const match = HASH_PART.exec(path.basename(file))
  if (match === null) return false
  const part = match[1]
  return /\d/.test(part) || (/[a-z]/.test(part) && /[A-Z]/.test(part))
}

// → the serveStatic options (maxAge, setHeaders) for these flags.
function cacheOptions ({ maxAge, immutable }) {
  const options = { maxAge: Math.floor(maxAge) * 1000 }
  if (immutable) {
    options.setHeaders = (res, file) => {
      if (isHashedName(file)) res.setHeader('Cache-Control', `public, max-age=${YEAR}, immutable`)
    }
  }
  return options
}

module.exports = { cacheOptions, isHashedName }
