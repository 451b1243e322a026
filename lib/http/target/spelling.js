'use strict'

// Whether a path below a root is spelled as its directories list it. On a file
// system that folds case (macOS and Windows by default, ext4 and tmpfs
// directories with casefold) or normalises Unicode (macOS), `/DEEP/x` opens
// `/deep/x`; a framework that routes on the raw path (Fastify) would let it past
// a guard on `/deep/*`. @fastify/static serves a path only under its exact
// spelling, and zcopy/fastify does the same.
//
// A directory lists its names only by reading it whole (readdir), which costs as
// much as the directory is big; so a segment is read for only when another
// spelling of it (its case swapped, its other Unicode normal form) also names
// something: where none does, the segment is the only spelling there is. A
// segment without letters has no other spelling. All of it on the thread pool.

const fs = require('node:fs')
const path = require('node:path')
const { promisify } = require('node:util')
const { statOrNothing } = require('../files')

function swapCase (name) {
  let swapped = ''
  for (const char of name) {
    const upper = char.toUpperCase()
    swapped += upper === char ? char.toLowerCase() : upper
  }
  return swapped
}

// The other spellings a folding or normalising file system may take for `name`.
function otherSpellings (name) {
  return [...new Set([swapCase(name), name.normalize('NFC'), name.normalize('NFD')])].filter((other) => other !== name)
}

const listOf = promisify(fs.readdir)

// → Promise of 'exact' or 'alias' for `name` in `dir`; rejects when it cannot be told.
async function segmentSpelling (dir, name) {
  const others = otherSpellings(name)
  if (others.length === 0) return 'exact'
  const found = await Promise.all(others.map((other) => statOrNothing(path.join(dir, other))))
  if (found.every((stat) => stat === undefined)) return 'exact'
  return (await listOf(dir)).includes(name) ? 'exact' : 'alias'
}

// → Promise of 'exact', 'alias' (some segment of `file` below `root` is another
// spelling of what is on disk) or 'unverifiable' (a directory could not be read:
// refuse, as @fastify/static does). `file` must be `root` or below it.
async function spellingBelow (root, file) {
  const relative = path.relative(root, file)
  if (relative === '') return 'exact'
  const segments = relative.split(path.sep)
  try {
    const answers = await Promise.all(segments.map((name, i) => segmentSpelling(path.join(root, ...segments.slice(0, i)), name)))
    return answers.includes('alias') ? 'alias' : 'exact'
  } catch {
    return 'unverifiable'
  }
}

module.exports = { spellingBelow }
