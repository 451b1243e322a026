'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { onCleanup } = require('./cleanup')

// A private directory under os.tmpdir() that is removed when `remove()` is
// called or, at the latest, when the process exits or is interrupted.
function createTempDir (prefix = 'zcopy-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const remove = onCleanup(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
  return { dir, remove }
}

const PATTERN_BYTES = 1024 * 1024

// Writes a file of exactly `size` bytes (a repeated random 1 MiB pattern, so
// nothing in the path can compress it) and leaves it in the page cache.
function writeFileOfSize (file, size) {
  const pattern = crypto.randomBytes(Math.min(size, PATTERN_BYTES))
  const fd = fs.openSync(file, 'w')
  try {
    for (let written = 0; written < size;) {
      written += fs.writeSync(fd, pattern, 0, Math.min(pattern.length, size - written))
    }
  } finally {
    fs.closeSync(fd)
  }
}

module.exports = { createTempDir, writeFileOfSize }
