'use strict'

// How the compression process and threads read a source: the `size` bytes of
// the file open as `fd`, READ_CHUNK at a time with pread, and its fstat after
// the read (what identifies the version compressed).

const fs = require('node:fs')

const READ_CHUNK = 1024 * 1024

// → { bytes, stat }, or null when the file had fewer than `size` bytes.
function readSource (fd, size) {
  const bytes = Buffer.allocUnsafe(size)
  let read = 0
  while (read < size) {
    const n = fs.readSync(fd, bytes, read, Math.min(size - read, READ_CHUNK), read)
    if (n === 0) return null
    read += n
  }
  const { dev, ino, size: now, mtimeMs, ctimeMs } = fs.fstatSync(fd)
  return { bytes, stat: { dev, ino, size: now, mtimeMs, ctimeMs } }
}

module.exports = { readSource }
