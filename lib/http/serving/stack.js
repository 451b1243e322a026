'use strict'

// The one factory of what a FileServer works with, from normalizeOptions()'s
// options (./options.js): the memory budget, the open-file cache on it, the
// variant store (`compress`) on both, and the delivery (how an answer leaves;
// undefined: through the response itself, see ./serve-file.js). They are handed
// to the FileServer and the StaticHandler as constructor arguments, never put
// in the options. serveStatic and the adapters build one stack per handler
// (buildStack); sendFile's calls share one cache and a store per set of
// compress settings (SharedStacks), built by the same functions.

const { MemoryBudget, OpenFileCache } = require('../files')
const { VariantStore } = require('../compress')

// sendFile's cache: 128 descriptors, nothing in memory (its compressed
// variants are all written to their folder and sent by sendfile), every
// directory it needs watched.
const SEND_FILE_LIMITS = Object.freeze({ maxOpenFiles: 128, memoryCache: 0, maxWatches: Infinity })
// Stores kept for sendFile's calls (one per set of compress settings).
const MAX_STORES = 8

// → { cache, memory }: one MemoryBudget for the cache's small files and the
// variants alike.
function filesFor ({ maxOpenFiles, memoryCache, maxWatches }) {
  const memory = new MemoryBudget(memoryCache)
  return { cache: new OpenFileCache({ max: maxOpenFiles, memory, maxWatches }), memory }
}

// The VariantStore for `compress` (compressOptions()'s settings), or null.
// Variants are made from the open-file cache's descriptors: none without it.
function storeFor (compress, { cache, memory }) {
  if (!compress) return null
  if (cache.max === 0) {
    process.emitWarning('compress needs the open-file cache (maxOpenFiles above 0): files are sent uncompressed', { code: 'ZCOPY_COMPRESS' })
    return null
  }
  return new VariantStore(compress, cache, { memory })
}

// → { cache, variants, delivery }: a handler's own (serveStatic, the adapters).
function buildStack (options, delivery) {
  const files = filesFor(options)
  return { cache: files.cache, variants: storeFor(options.compress, files), delivery }
}

// sendFile's: one cache for every call (callers often pass a fresh options
// object), and one store per set of compress settings, at most MAX_STORES. A
// store removes its folder when it is evicted, when close() is called (a
// server it answered for emitted 'close'; the store stays usable), and when
// the process exits (./compress/cache-dir.js).
class SharedStacks {
  constructor (limits = SEND_FILE_LIMITS) {
    this.files = filesFor(limits)
    this.stores = new Map() // settings' signature → VariantStore, oldest first
  }

  // → { cache, variants, delivery } for `options` (normalizeOptions()'s).
  stackFor (options) {
    return { cache: this.files.cache, variants: options.compress ? this.storeFor(options.compress) : null, delivery: undefined }
  }

  storeFor (compress) {
    let store = this.stores.get(compress.signature)
    if (store === undefined) {
      if (this.stores.size >= MAX_STORES) {
        const [oldest, evicted] = this.stores.entries().next().value
        this.stores.delete(oldest)
        evicted.close()
      }
      store = storeFor(compress, this.files)
      this.stores.set(compress.signature, store)
    }
    return store
  }

  // Drops every store's variants (removing their folders).
  close () {
    return Promise.all(Array.from(this.stores.values(), (store) => store.close()))
  }
}

module.exports = { SharedStacks, buildStack }
