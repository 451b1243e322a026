'use strict'

// Compressed variants of served files, made once in the background and sent
// from then on like the file itself (docs/internals.md, "Compressed variants").
//
// - A record per source path holds the identity the variants were made from
//   (device, inode, size, mtime, ctime: the open-file cache's sameFile()) and the
//   root proof it was opened under. A request whose file has another identity,
//   or whose root has another proof, drops the record and its variants; so does
//   a change the open-file cache's watches report (changed()), the same rule
//   that drops its open files. A change while a variant is being made discards
//   that variant: the source is read from the cache's open, proven descriptor,
//   fstat'ed again after the read, and the record must still be current when
//   the variant is done.
// - The first request for a file is answered with the file itself; the coding
//   it prefers is queued, and `concurrency` compressions run at once, off the
//   event loop and off libuv's pool (./background.js: in compression processes
//   at SCHED_IDLE on Linux, else on threads at nice 19, shared by every store,
//   a job waiting there when all are busy), which read the source themselves
//   from the cache's descriptor; so a burst of new files
//   waits in the queue, never in front of requests, and takes only the CPU
//   the requests leave. A burst (BURST jobs or more waiting) is held back
//   while the event loop is busy (./loop-busy.js), until the first job in the
//   queue has waited MAX_DEFER_MS: a server answering requests as fast as it
//   can loses nothing to a thousand new files. Under a load that lasts,
//   variants are still made, but a slice of the time only (BUSY_SHARE): after
//   a job that took t, the next of the burst waits t / BUSY_SHARE - t while
//   the loop stays busy; once it is not, they all go. A few jobs at a time (a
//   changed file) go at once: held, a changed file on a busy server would be
//   sent uncompressed for 10 s after each change.
// - At most `cpuBudget` ms of compression per minute (./cpu-budget.js): past
//   it, nothing is queued or started, the file itself is sent, and the coding
//   is asked for again by a later request.
// - A variant of up to 64 KiB is kept in memory, within the open-file cache's
//   `memoryCache` bytes (shared with its small files); a larger one (or one that
//   does not fit there) is written to the store's own folder (./cache-dir) and
//   sent from its descriptor by sendfile, opened through the open-file cache.
//   The folder holds at most `cacheBytes`: the least recently used variants are
//   removed first. A record is kept as long as it holds a variant (up to
//   MAX_RECORDS); records without one, at most max(1,024, the open-file
//   cache's size), the oldest first. A file whose variant was evicted is made
//   again at the cheaper levels (./encoders.js, CHEAP): a cache smaller than
//   what is asked for (a crawler) costs far less CPU per round.
// - Disk full, read-only or missing folder, a compression error: that file is
//   sent as it is, one warning is emitted (per store), nothing is left behind.

const path = require('node:path')
const { compressFile } = require('./background')
const { CompressionQueue } = require('./compression-queue')
const { CpuBudget } = require('./cpu-budget')
const { CHEAP } = require('./encoders')
const { compressibleByName } = require('./types')
const { VariantFolder } = require('./variant-folder')
const { etagOf, lastModifiedOf } = require('./variant-headers')
const { SourceRecord, Variant, sameProof } = require('./variants')
const { sameFile } = require('../files')
const { IDENTITY, acceptedCodings, contentTypeOf } = require('../representation')

const IN_MEMORY = 64 * 1024 // the largest variant kept in memory (the memory cache's SMALL_FILE)
const MAX_RECORDS = 65_536 // records, those holding variants included; the files whose variant was evicted remembered
const RANKINGS = 256 // Accept-Encoding values whose ranking is kept
const MIN_SAVING = 0.05 // a variant saving less than 5 % is not kept

class VariantStore {
  // `config`: compressOptions(); `cache`: the OpenFileCache whose memory budget
  // small variants share, whose entries are the sources read, and which opens
  // the disk variants.
  // `memory`: the MemoryBudget variants are kept in memory within (none: all
  // go to the folder).
  constructor (config, cache, { warn = defaultWarn, memory = null } = {}) {
    this.config = config
    this.cache = cache
    this.memory = memory
    this.warn = warn
    this.warned = false
    this.compressible = compressibleByName(config.types)
    this.offered = [...config.encodings, IDENTITY] // in the server's order of preference
    this.records = new Map() // source path → SourceRecord, oldest first
    this.bare = new Map() // the records that hold no variant, oldest first
    this.evictedPaths = new Map() // source paths whose variant was evicted (made cheaper), oldest first
    this.budget = new CpuBudget(config.cpuBudget)
    this.rankings = new Map() // Accept-Encoding value → ranking(), at most RANKINGS
    this.memoryBytes = 0
    this.queue = new CompressionQueue({
      concurrency: config.concurrency,
      budget: this.budget,
      run: (job) => this.make(job).catch((err) => this.failed(job, err)).finally(() => job.record.pending.delete(job.encoding)),
      overBudget: (job) => {
        job.record.pending.delete(job.encoding)
        this.counts.overBudget++
      }
    })
    this.disk = new VariantFolder(config, { warnOnce: (message) => this.warnOnce(message), forgetFile: (file) => cache.forgetFile(file) })
    this.closed = false
    this.closing = null // Promise of the close() under way
    this.counts = { made: 0, served: 0, identityWhilePending: 0, evicted: 0, failed: 0, bytesSaved: 0, discarded: 0, cheap: 0, overBudget: 0, cpuMs: 0 }
    this.unlisten = cache.onChange((changed) => this.changed(changed))
    this.disk.folder() // at start: the folders of processes that are gone are removed
  }

  // Whether a file, named `typePath`, of `size` bytes gets variants.
  eligible (typePath, size) {
    return size >= this.config.threshold && size <= this.config.maxSize && size > 0 && this.compressible(typePath)
  }

  // → { variant, vary, wanted, pending } for a request for the file `located`
  // ({ path, stat }), named `typePath`, in a scope whose root proof is now
  // `proof`: the variant to send (or null: the file itself), whether the answer
  // depends on Accept-Encoding, the coding to make for later requests (or null),
  // and whether the coding the client prefers is being made already.
  choose (req, located, typePath, proof) {
    const { stat } = located
    if (this.closed || !this.eligible(typePath, stat.size)) return NOT_ELIGIBLE
    let record = this.records.get(located.path)
    if (record !== undefined && !sameFile(record.stat, stat)) {
      this.drop(record)
      record = undefined
    }
    const ranked = this.ranking(req.headers['accept-encoding'])
    const best = ranked[0]
    if (best === undefined || best === IDENTITY) return IDENTITY_VARYING
    if (record !== undefined && proof === null) {
      // The root is idle (the open-file cache closed its descriptor): nothing
      // proves it is still the directory the variants were made under. The file
      // itself is sent, opened and proven anew, and want() then keeps the
      // variants if the reopened root is the same directory (sameProof()).
      return { variant: null, vary: true, wanted: best, pending: false }
    }
    if (record !== undefined && !sameProof(record.proof, proof)) {
      this.drop(record)
      record = undefined
    }
    // The client's best coding that is ready, unless it prefers identity to it.
    let variant = null
    if (record !== undefined && record.variants.size > 0) {
      for (const encoding of ranked) {
        if (encoding === IDENTITY) break
        variant = record.variants.get(encoding) || null
        if (variant !== null) break
      }
    }
    if (variant !== null && variant.encoding === best) return { variant, vary: true, wanted: null }
    const pending = record !== undefined && record.pending.has(best)
    const wanted = pending || (record !== undefined && record.refused.has(best)) ? null : best
    return { variant, vary: true, wanted, pending }
  }

  // → the codings this store makes, and identity, that an Accept-Encoding
  // header accepts, best first (../representation's acceptedCodings: q-values,
  // `*`, the server's order on a tie), kept per header value (a few values come
  // again and again).
  ranking (header = '') {
    let ranked = this.rankings.get(header)
    if (ranked === undefined) {
      ranked = acceptedCodings(header, this.offered)
      if (this.rankings.size >= RANKINGS) this.rankings.clear()
      this.rankings.set(header, ranked)
    }
    return ranked
  }

  // The file itself was sent for a request that wanted `encoding`: queue making
  // it, from `entry`, the open-file cache's open entry of the file (its
  // descriptor and fstat, proven in its scope). → whether it is being made now.
  want (entry, encoding) {
    if (this.closed || encoding === null || !entry.isOpen()) return false
    let record = this.records.get(entry.path)
    if (record !== undefined && (!sameFile(record.stat, entry.stat) || !sameProof(record.proof, entry.proof))) {
      this.drop(record)
      record = undefined
    }
    if (record === undefined) {
      record = new SourceRecord(entry.path, entry.stat, entry.proof)
      this.records.set(entry.path, record)
      this.bare.set(entry.path, record)
      this.trimRecords()
    }
    record.proof = entry.proof // the same directory's, maybe reopened since
    if (record.pending.has(encoding)) return true
    if (record.refused.has(encoding) || record.variants.has(encoding) || this.queue.full()) return false
    if (this.budget.exhausted()) {
      this.counts.overBudget++
      return false
    }
    record.pending.add(encoding)
    this.queue.push({ record, entry, encoding })
    return true
  }

  // The file itself was sent (a body, not HEAD or 304) because the coding the
  // client prefers was still being made.
  sentWhilePending () {
    this.counts.identityWhilePending++
  }

  // A variant was sent: `full` when the whole body (not a range, not HEAD).
  sent (variant, full) {
    this.counts.served++
    if (full) this.counts.bytesSaved += variant.record.stat.size - variant.size
    this.disk.touch(variant)
  }

  // Sent again by a replay of its answer (onReplayable's used()).
  replayed (variant) {
    this.disk.touch(variant)
  }

  async make ({ record, entry, encoding }) {
    if (record.dropped || !entry.isOpen() || this.closed) return this.discard()
    const cheap = this.evictedPaths.has(record.path)
    const made = await this.compressSource(entry, record.stat.size, encoding, cheap)
    if (made !== null) {
      this.budget.spend(made.cpuMs)
      this.counts.cpuMs += made.cpuMs
    }
    if (made === null || !sameFile(made.stat, record.stat) || record.dropped || this.closed) return this.discard()
    const { out } = made
    const size = record.stat.size
    if (out.length > size * (1 - MIN_SAVING)) {
      record.refused.add(encoding) // not worth it: the file is sent as it is
      return
    }
    const variant = new Variant(record, encoding, out.length, cheap)
    variant.headers = {
      typePath: record.path,
      contentType: contentTypeOf(record.path),
      etag: etagOf(record.stat, encoding, out.length, cheap ? CHEAP[encoding] : null),
      lastModified: lastModifiedOf(record.stat)
    }
    if (out.length <= IN_MEMORY && this.memory !== null && this.memory.reserve(out.length)) {
      variant.body = out
      this.memoryBytes += out.length
    } else if (!(await this.disk.put(variant, out))) {
      record.refused.add(encoding)
      return
    } else {
      for (const old of this.disk.overBudget()) this.evict(old)
    }
    if (record.dropped || this.closed) {
      this.remove(variant)
      return this.discard()
    }
    record.variants.set(encoding, variant)
    this.bare.delete(record.path)
    this.counts.made++
    if (cheap) this.counts.cheap++
  }

  // → Promise of { out, stat, cpuMs }: the `size` bytes of `entry`'s file
  // (read from its descriptor, held open meanwhile) compressed into `encoding`
  // (`cheap`: at the cheaper level) by a compression process or thread
  // (./background.js), its fstat after the read, and what that cost; null
  // when it had fewer bytes.
  async compressSource (entry, size, encoding, cheap) {
    this.cache.hold(entry) // its descriptor stays open while it is read
    try {
      return await compressFile(encoding, entry.fd, size, this.config.concurrency, cheap)
    } finally {
      this.cache.release(entry)
    }
  }

  // → Promise of the folder larger variants are written to, made on first
  // use, or false.
  folder () {
    return this.disk.folder()
  }

  // `variant` goes to make room: its file is made cheaper next time.
  evict (variant) {
    const { record } = variant
    record.variants.delete(variant.encoding)
    this.remove(variant)
    this.counts.evicted++
    this.evictedPaths.delete(record.path)
    this.evictedPaths.set(record.path, true)
    if (this.evictedPaths.size > MAX_RECORDS) this.evictedPaths.delete(this.evictedPaths.keys().next().value)
    if (record.variants.size === 0 && !record.dropped) this.bare.set(record.path, record)
  }

  // Lets go of `variant`'s bytes: its memory, or its file (a response still
  // sending it keeps its descriptor; the open-file cache closes it after).
  remove (variant) {
    if (variant.body !== null) {
      this.memory.free(variant.body.length)
      this.memoryBytes -= variant.body.length
    }
    this.disk.remove(variant)
    variant.removed() // its body let go, whenRemoved()'s listeners told
  }

  // A disk variant's file could not be opened (removed by hand, or by a
  // cleaner of /tmp): it is forgotten, and made again when next asked for.
  lost (variant) {
    const { record } = variant
    if (record.variants.get(variant.encoding) !== variant) return
    record.variants.delete(variant.encoding)
    this.remove(variant)
    this.counts.evicted++
    if (record.variants.size === 0 && !record.dropped) this.bare.set(record.path, record)
  }

  failed ({ record, encoding }, err) {
    record.refused.add(encoding)
    this.counts.failed++
    this.warnOnce(`could not make a compressed variant of ${record.path} (${err.code || err.message}): it is sent uncompressed`)
  }

  discard () {
    this.counts.discarded++
  }

  warnOnce (message) {
    if (this.warned) return
    this.warned = true
    this.warn(message)
  }

  drop (record) {
    if (record.dropped) return
    record.dropped = true
    if (this.records.get(record.path) === record) this.records.delete(record.path)
    if (this.bare.get(record.path) === record) this.bare.delete(record.path)
    for (const variant of record.variants.values()) {
      this.remove(variant)
      this.counts.evicted++
    }
    record.variants.clear()
  }

  // Keeps the records that hold variants (their bytes are bounded by
  // memoryCache and cacheBytes), and at most as many others as the open-file
  // cache may hold files (and 1,024 at least), the oldest first; MAX_RECORDS
  // in all, the oldest first then, variants or not.
  trimRecords () {
    const max = Math.max(1024, this.cache.max)
    while (this.bare.size > max) this.drop(this.bare.values().next().value)
    while (this.records.size > MAX_RECORDS) {
      const oldest = this.records.values().next().value
      for (const variant of Array.from(oldest.variants.values())) this.evict(variant)
      this.drop(oldest)
    }
  }

  // The open-file cache heard a change at `changed`: records of it or below it go.
  changed (changed) {
    const below = changed + path.sep
    for (const record of this.records.values()) {
      if (record.path === changed || record.path.startsWith(below)) this.drop(record)
    }
  }

  // → Promise resolved once no variant is being made or waits to be, and the
  // files of those evicted are gone.
  whenIdle () {
    return this.queue.whenIdle().then(() => this.disk.whenRemoved())
  }

  stats () {
    return {
      ...this.counts,
      cpuMs: Math.round(this.counts.cpuMs),
      pending: this.queue.pending(),
      memoryBytes: this.memoryBytes,
      diskBytes: this.disk.bytes,
      cacheDir: this.disk.dirPath
    }
  }

  // Drops every variant and removes the store's folder. → Promise. The store
  // stays usable (it makes a new folder when it needs one); calls while one
  // runs share it.
  close () {
    if (this.closing === null) this.closing = this.closeNow().finally(() => { this.closing = null })
    return this.closing
  }

  async closeNow () {
    this.closed = true
    this.unlisten()
    for (const record of Array.from(this.records.values())) this.drop(record)
    this.queue.clear()
    await this.whenIdle()
    await this.disk.close()
    this.closed = false // usable again, as the open-file cache is after clear()
    this.unlisten = this.cache.onChange((changed) => this.changed(changed))
  }
}

const NOT_ELIGIBLE = Object.freeze({ variant: null, vary: false, wanted: null, pending: false })
const IDENTITY_VARYING = Object.freeze({ variant: null, vary: true, wanted: null, pending: false })

function defaultWarn (message) {
  process.emitWarning(message, { code: 'ZCOPY_COMPRESS' })
}

module.exports = { IN_MEMORY, VariantStore }
