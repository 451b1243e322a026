'use strict'

// How the compression process and threads read a source: the `size` bytes of
// the file open as `fd`, READ_CHUNK at a time with pread (the engine's
// readAtSync: they read synchronously off the server's loop), and its fstat
// after the read (what identifies the version compressed).

const fs = require('node:fs')
const { readAtSync } = require('../../engine')

const READ_CHUNK = 1024 * 1024

// → { bytes, stat }, or null when the file had fewer than `size` bytes.
function readSource (fd, size) {
  const bytes = Buffer.allocUnsafe(size)
  if (readAtSync(fd, bytes, 0, READ_CHUNK) < size) return null
  const { dev, ino, size: now, mtimeMs, ctimeMs } = fs.fstatSync(fd)
  return { bytes, stat: { dev, ino, size: now, mtimeMs, ctimeMs } }
}

module.exports = { readSource }
