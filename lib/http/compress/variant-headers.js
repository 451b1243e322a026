'use strict'

// The validators of a compressed variant, from the source's stat alone, so that
// every replica with the same file (same size and mtime, as its own ETag needs)
// gives the same ones: a weak ETag like the file's (size and mtime, as the etag
// package makes it), with the variant's size and its coding, so that each
// representation has its own (`level`: the cheaper level it was made at, when
// it was, ./encoders.js); Last-Modified the file's.

function etagOf (stat, encoding, size, level = null) {
  return `W/"${size.toString(16)}-${stat.mtime.getTime().toString(16)}-${encoding}${level === null ? '' : `-${level}`}"`
}

function lastModifiedOf (stat) {
  return stat.mtime.toUTCString()
}

module.exports = { etagOf, lastModifiedOf }
