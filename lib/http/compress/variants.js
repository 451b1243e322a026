'use strict'

// What the variant store (./store) keeps per source file: a SourceRecord, the
// identity the variants were made from and the root proof it was opened
// under, with its Variants, each a body of its own: bytes in memory, or a file
// in the store's folder (./variant-folder).

const crypto = require('node:crypto')
const { suffixOf } = require('../representation')

// Whether two root proofs (see ../files/open-confined.js) are of the same directory:
// the same proof, or the same directory reopened (the open-file cache closes an
// idle root's descriptor and reopens it later: its variants stay good).
function sameProof (a, b) {
  return a === b || (a !== null && b !== null && a.dev !== undefined && a.dev === b.dev && a.ino === b.ino)
}

class SourceRecord {
  constructor (file, stat, proof) {
    this.path = file
    this.stat = stat
    this.proof = proof
    this.variants = new Map() // encoding → Variant
    this.pending = new Set() // encodings queued or being made
    this.refused = new Set() // encodings not made for this version (error, no gain)
    this.dropped = false
  }
}

class Variant {
  constructor (record, encoding, size, cheap) {
    this.record = record
    this.encoding = encoding
    this.size = size
    this.cheap = cheap // made at the cheaper level (./encoders.js, CHEAP)
    this.body = null // a memory variant's bytes
    this.path = null // a disk variant's file
    this.stat = null // and its stat, to open it through the open-file cache
    this.headers = null // { typePath, contentType, etag, lastModified }
    this.listeners = [] // whenRemoved()'s; null once removed
  }

  // Calls `listener` once the store lets go of it (at once if it has): for a
  // holder elsewhere of an answer made of it (the native lane's rows).
  whenRemoved (listener) {
    if (this.listeners === null) listener()
    else this.listeners.push(listener)
  }

  // The store let go of it (VariantStore.remove()).
  removed () {
    this.body = null
    const listeners = this.listeners ?? []
    this.listeners = null
    for (const listener of listeners) listener()
  }

  // The name a variant's body from memory goes by (the file's, with the
  // coding's suffix), for a framework that looks at a body's path.
  get name () {
    return this.record.path + suffixOf(this.encoding)
  }

  // The name its file gets in the store's folder: the source's path hashed,
  // its identity, the level and the coding's suffix.
  fileName () {
    const { stat } = this.record
    const hash = crypto.createHash('sha256').update(this.record.path).digest('hex').slice(0, 16)
    return `${hash}-${stat.dev}-${stat.ino}-${Math.round(stat.ctimeMs * 1000)}${this.cheap ? '-cheap' : ''}${suffixOf(this.encoding)}`
  }
}

module.exports = { SourceRecord, Variant, sameProof }
