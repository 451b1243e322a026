'use strict'

// Content ETags (the `etag: 'content'` option): validators made of a file's
// bytes, so that replicas serving copies of one folder agree whatever the
// copies' mtimes. The file's (or a precompressed sibling's) ETag is strong:
// `"` + the first 16 bytes of the SHA-256 of its bytes in base64url (22
// characters) + `"`. A compressed variant's is weak and derived from its
// source's: W/"<source's 22 characters>-<coding>", the same whatever level the
// variant was made at (its bytes decode to the same content, which is what a
// weak validator vouches for).
//
// A tag is computed once per file version: per open-file cache entry (one
// device, inode, size, mtime and ctime), kept in a WeakMap keyed by it, as
// ./headers.js keeps its values; a variant's source tag also per the store's
// record of that version, so a variant outliving its source's entry needs no
// new hash. A body the cache keeps in memory, up to HASHED_AT_ONCE bytes, is
// hashed in the call (~0.1 ms for 64 KiB); any other file is read from the
// entry's descriptor HASH_CHUNK at a time on the thread pool (the engine's readRange), each
// chunk hashed on the loop (~0.25 ms), so a big file never holds the loop for
// long (the compression process or threads would hash off the loop, but run
// at the lowest CPU priority, where a request waiting for its tag would wait
// behind any load; WebCrypto's digest runs on the pool but wants the whole
// file in memory). Then the descriptor is fstat'ed again: a file that changed while it
// was read (another size, mtime or ctime, or fewer bytes) gets no tag; its
// entry is dropped, as a transfer that finds its file truncated drops it, and
// the request fails with a 503 (a retry finds the new version).

const crypto = require('node:crypto')
const fs = require('node:fs')
const { promisify } = require('node:util')
const { readRange } = require('../../engine')
const { memoryBody, sameFile } = require('../files')
const { HttpError } = require('../common')

const HASHED_AT_ONCE = 64 * 1024
const HASH_CHUNK = 128 * 1024
const TAG_BYTES = 16

const fstat = promisify(fs.fstat)

const tagsByEntry = new WeakMap() // cache entry → its tag, or a Promise of it
const tagsByRecord = new WeakMap() // variant store record → its source's tag, or a Promise of it

function tagOf (hash) {
  return `"${hash.digest().subarray(0, TAG_BYTES).toString('base64url')}"`
}

// A variant's tag, from its source's `tag` and its coding.
function variantTag (tag, encoding) {
  return `W/${tag.slice(0, -1)}-${encoding}"`
}

class ContentTags {
  // `cache`: the OpenFileCache whose entries are hashed (held meanwhile,
  // dropped when found changed).
  constructor (cache) {
    this.cache = cache
  }

  // → the tag of the cache entry `entry` (held by the caller), or a Promise of
  // it; rejects as the module's comment says.
  of (entry) {
    let tag = tagsByEntry.get(entry)
    if (tag !== undefined) return tag
    const body = memoryBody(entry, true)
    if (body !== null && body.length <= HASHED_AT_ONCE) {
      tag = tagOf(crypto.createHash('sha256').update(body))
    } else {
      tag = this.hash(entry).then((done) => {
        tagsByEntry.set(entry, done)
        return done
      }, (err) => {
        tagsByEntry.delete(entry)
        throw err
      })
    }
    tagsByEntry.set(entry, tag)
    return tag
  }

  // → the tag of `variant` (a VariantStore's), or a Promise of it.
  // `openSource()`: → its source's cache entry, held (or a Promise of it),
  // asked for only when the record has no tag yet; released here.
  ofVariant (variant, openSource) {
    const known = tagsByRecord.get(variant.record)
    if (typeof known === 'string') return variantTag(known, variant.encoding)
    const tag = known || this.ofSource(variant.record, openSource)
    return tag.then((done) => variantTag(done, variant.encoding))
  }

  async ofSource (record, openSource) {
    const pending = (async () => {
      const source = await openSource()
      try {
        return await this.of(source)
      } finally {
        this.cache.release(source)
      }
    })()
    tagsByRecord.set(record, pending)
    try {
      const tag = await pending
      tagsByRecord.set(record, tag)
      return tag
    } catch (err) {
      tagsByRecord.delete(record)
      throw err
    }
  }

  // → Promise of the tag of `entry`'s bytes, read from its descriptor.
  async hash (entry) {
    const { size } = entry.stat
    const hash = crypto.createHash('sha256')
    let unchanged = false
    this.cache.hold(entry) // its descriptor stays open while it is read
    try {
      const done = await readRange(entry.fd, 0, size, HASH_CHUNK, (bytes) => hash.update(bytes))
      unchanged = done === size && sameFile(await fstat(entry.fd), entry.stat)
    } finally {
      this.cache.release(entry)
    }
    if (unchanged) return tagOf(hash)
    this.cache.truncated(entry)
    throw new HttpError(503, { headers: { 'Retry-After': '0' }, cause: new Error('the file changed while its content ETag was computed') })
  }
}

module.exports = { ContentTags }
