'use strict'

// The soak's file tree: files of assorted sizes (1 B to a few MiB, sizes at and
// around the boundaries the transfer paths care about), random content, a few
// directories deep. The parent keeps every file's bytes to verify what arrives,
// and their sha256 to check, at the end, that nothing wrote into them.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const KiB = 1024
const MiB = 1024 * KiB

// Boundaries: page size, the 64 KiB stream chunk, the 256 KiB single-chunk limit
// of the response-object path, 1 MiB; plus odd sizes and a few MiB.
const SIZES = [
  1, 2, 7, 100, 1000, 1460,
  4 * KiB - 1, 4 * KiB, 4 * KiB + 1, 10_000,
  64 * KiB - 1, 64 * KiB, 64 * KiB + 1, 100_000,
  256 * KiB - 1, 256 * KiB, 256 * KiB + 1,
  MiB - 1, MiB, MiB + 1, 2 * MiB + 12_345, 3 * MiB + 7, 5 * MiB + 3
]

function sha256 (buffer) {
  return crypto.createHash('sha256').update(buffer).digest('hex')
}

// → [{ url, file, size, content, sha256 }]
function makeTree (root) {
  const files = []
  SIZES.forEach((size, i) => {
    const dir = ['', 'a', 'a/b', 'c d'][i % 4]
    const name = `f${i}-${size}.bin`
    const rel = dir ? `${dir}/${name}` : name
    const file = path.join(root, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const content = crypto.randomBytes(size)
    fs.writeFileSync(file, content)
    const url = '/' + rel.split('/').map(encodeURIComponent).join('/')
    files.push({ url, file, size, content, sha256: sha256(content) })
  })
  return files
}

// → the files whose bytes on disk are no longer what was written.
function changedFiles (files) {
  return files.filter(({ file, sha256: expected }) => {
    try {
      return sha256(fs.readFileSync(file)) !== expected
    } catch {
      return true
    }
  }).map(({ url }) => url)
}

module.exports = { makeTree, changedFiles }
