'use strict'

// The one way the tree reads a range of a regular file's descriptor: pread in
// as many reads as it takes, stopping early only at the file's end (a read of
// 0 bytes). Everything that reads a file's bytes by its descriptor comes here:
// the copy through user space (copy/range-copy.js, its own buffers), lib/http's
// file bodies for frameworks, content ETags, the open-file cache's bodies in
// memory, and the compression's sources (in its process or threads, where
// reading synchronously is the point).
// (fallback.js and stream-source.js read too: into a descriptor they write
// to, and a non-regular source without a position.)

const fs = require('node:fs')

// Fills `buffer` with the bytes of `fd` from `position`; calls back with
// (err, filled): filled < buffer.length only where the file ended first. One
// callback per call, no promise: a copy through user space may have a
// thousand of these waiting (copy/range-copy.js says why that matters).
function readAt (fd, buffer, position, callback) {
  let filled = 0
  const more = () => fs.read(fd, buffer, filled, buffer.length - filled, position + filled, next)
  const next = (err, bytesRead) => {
    if (err) return callback(err, filled)
    filled += bytesRead
    if (bytesRead === 0 || filled === buffer.length) return callback(null, filled)
    more()
  }
  more()
}

// → the bytes read into `buffer` from `position`, as readAt, synchronously, at
// most `chunk` bytes a read.
function readAtSync (fd, buffer, position, chunk = buffer.length) {
  let filled = 0
  while (filled < buffer.length) {
    const bytesRead = fs.readSync(fd, buffer, filled, Math.min(buffer.length - filled, chunk), position + filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled
}

// Reads bytes [start, start + length) of `fd`, `chunk` bytes at a time into
// one buffer, and hands each to `onBytes(view)` (valid only during the call).
// → Promise of the bytes read: fewer than `length` where the file ended first.
function readRange (fd, start, length, chunk, onBytes) {
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(length, chunk)))
  return new Promise((resolve, reject) => {
    let done = 0
    const next = () => {
      if (done >= length) return resolve(done)
      const size = Math.min(buffer.length, length - done)
      readAt(fd, size < buffer.length ? buffer.subarray(0, size) : buffer, start + done, (err, filled) => {
        if (err) return reject(err)
        try {
          if (filled > 0) onBytes(filled < buffer.length ? buffer.subarray(0, filled) : buffer)
        } catch (err) {
          return reject(err)
        }
        done += filled
        if (filled < size) return resolve(done)
        next()
      })
    }
    next()
  })
}

module.exports = { readAt, readAtSync, readRange }
