'use strict'

// The validators of a compressed variant, from the source's stat alone, so that
// every replica with the same file (same size and mtime, as its own ETag needs)
// gives the same ones: a weak ETag like the file's (size and mtime, as the etag
// package makes it), with the variant's size and its coding, so that each
// representation has its own; Last-Modified the file's.

function etagOf (stat, encoding, size) {
  return `W/"${size.toString(16)}-${stat.mtime.getTime().toString(16)}-${encoding}"`
}

function lastModifiedOf (stat) {
  return stat.mtime.toUTCString()
}

module.exports = { etagOf, lastModifiedOf }
