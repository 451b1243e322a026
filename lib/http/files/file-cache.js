'use strict'

// An open-file cache, like nginx's open_file_cache: one descriptor and its fstat per
// file path, shared by every response sending that file, so a hit costs no
// open/fstat/close thread-pool round trips.
//
// Correctness rules:
// - A file is admitted only as ./open-confined opens it: non-blocking, a regular
//   file by its descriptor's fstat, and (under a root) proven beneath the root on
//   the descriptor. The entry keeps the proof it was admitted on; it is used only
//   while the caller's scope still has that same proof (a root re-resolved to
//   another directory, or reopened after clear(), has a new one), so no entry
//   outlives its proof. The proof is taken once, at admission, not per request.
// - An entry is used only while a fresh stat of its path (taken by the caller on
//   every request) still names the same file: same device, inode, size, mtime and
//   ctime. A replaced, truncated or rewritten file gets a new entry, so stale bytes
//   or headers are never served; the old descriptor closes once its last user is done.
// - Or, without that stat, while change notification vouches for it: the request
//   paths remembered as naming an entry (`paths`, ./remembered-paths), whose
//   watches drop the entry on any change of the file or a directory on its way;
//   and while an fstat of its descriptor, at most CHECK_INTERVAL_MS old, still
//   finds it linked and unchanged (see isCurrent()): a write no watch reports
//   (through a hard link whose other name is elsewhere, through mmap, by another
//   host) is seen within that interval.
// - An entry whose file turns out shorter than its stat during a transfer is
//   dropped at once (see truncated()).
// - Descriptors close when evicted (least recently used beyond `max`, idle for a
//   sweep period, or stale), and all, with the roots, on clear() (a server's 'close');
//   whenDropped() tells a holder elsewhere (the native lane's rows) of an eviction.
// - Responses hold an entry between take() or acquire() and release(); it is never
//   closed under them.

const fs = require('node:fs')
const { readAt } = require('../../engine')
const { tick } = require('./dir-watches')
const { onClose } = require('../common')
const { ConfinedRoot, UNCONFINED } = require('./open-confined')
const { MemoryBudget } = require('./memory-budget')
const { OpenFile, keptInMemory } = require('./open-file')
const { RememberedPaths } = require('./remembered-paths')
const { kindOf, sameFile, statOf } = require('./stat')

const SWEEP_INTERVAL_MS = 10_000
// How old the proof that an entry's descriptor still has the stat it was opened
// with may be, for requests with no stat of their own (remembered paths). nginx's
// open_file_cache_valid is 60 s; an fstat costs ~2 us, once a second per file.
const CHECK_INTERVAL_MS = 1000
const MAX_ROOTS = 64

class OpenFileCache {
  // `sweepIntervalMs`: an entry unused for one to two periods is closed. `memory`: the
  // MemoryBudget small, hot files are kept in memory within (none by default).
  // `maxWatches`: how many directories may be watched at once.
  constructor ({ max = 128, sweepIntervalMs = SWEEP_INTERVAL_MS, memory = new MemoryBudget(), maxWatches = Infinity } = {}) {
    this.max = max
    this.memory = memory
    this.sweepIntervalMs = sweepIntervalMs
    this.entries = new Map()
    this.unclosed = new Set() // every entry whose descriptor is not closed yet, cached or not
    this.sweeper = null
    this.roots = new Map() // root path → ConfinedRoot
    this.clearOnServerClose = () => {
      this.closesWith = null // a server may listen again, and close again
      this.clear()
    }
    this.closesWith = null // the server clearOnClose() last registered with
    this.paths = new RememberedPaths(this, maxWatches) // request paths that name an entry
    this.dropListeners = new WeakMap() // entry → whenDropped()'s listeners
  }

  // Calls `listener` once `entry` leaves the cache (at once if it has left).
  whenDropped (entry, listener) {
    if (entry.evicted) listener()
    else this.dropListeners.set(entry, [...(this.dropListeners.get(entry) ?? []), listener])
  }

  // Has `listener(path)` hear every change the watches report, as the entries do
  // (see RememberedPaths.changed()): compressed variants are dropped by the same
  // rule. → a function that stops it.
  onChange (listener) {
    return this.paths.onChange(listener)
  }

  // The entry cached for `file` (open, or being opened), or undefined.
  entryOf (file) {
    return this.entries.get(file)
  }

  // Drops the entry of `file`, if any (closed once no response uses it).
  forgetFile (file) {
    const entry = this.entries.get(file)
    if (entry !== undefined) this.evict(entry)
  }

  // Drops every entry whose path starts with `prefix` (a directory's path and a
  // separator: everything below it).
  forgetBelow (prefix) {
    for (const entry of this.entries.values()) {
      if (entry.path.startsWith(prefix)) this.evict(entry)
    }
  }

  // The scope files below `root` are opened in: UNCONFINED for null (no root, or
  // symlinks out of it allowed), else that root's ConfinedRoot, kept until clear().
  scope (root) {
    if (root === null) return UNCONFINED
    let scope = this.roots.get(root)
    if (scope === undefined) {
      if (this.roots.size >= MAX_ROOTS) {
        const [oldest, evicted] = this.roots.entries().next().value
        this.roots.delete(oldest)
        evicted.close()
      }
      scope = new ConfinedRoot(root, (retired) => {
        this.paths.rootMoved(root) // its name names another directory: its way may have changed
        this.evictProvenBy(retired)
      })
      this.roots.set(root, scope)
    }
    return scope
  }

  // Clears the cache when `server` closes (null is ignored).
  clearOnClose (server) {
    if (!server || server === this.closesWith) return
    onClose(server, this.clearOnServerClose)
    this.closesWith = server
  }

  // → the OpenFile for `file` when it is open here, proven against `scope`'s
  // current proof, and still the file whose stat the caller just took; else null
  // (then acquire()). Pair with release(). The common case, a hit, without a promise.
  // `copied`: the request's body is copied through user space anyway (see use()).
  take (file, stat, scope = UNCONFINED, copied = false) {
    const cached = this.entries.get(file)
    if (cached === undefined || cached.stat === null || cached.proof !== scope.proof || !sameFile(cached.stat, stat)) return null
    return this.use(cached, copied)
  }

  // → Promise<OpenFile> for `file`, whose current stat the caller just took, opened
  // in `scope` (see scope()). Rejects with the fs error when it cannot be opened, or
  // with a 404 HttpError when what was opened may not be served. Pair with release().
  // `copied`: as take()'s.
  acquire (file, stat, scope = UNCONFINED, copied = false) {
    const cached = this.entries.get(file)
    if (cached !== undefined) {
      if (cached.stat === null ? cached.scope === scope : cached.proof === scope.proof && sameFile(cached.stat, stat)) {
        return this.use(cached, copied).ready
      }
      this.evict(cached)
    }
    const entry = new OpenFile(file, scope)
    entry.ready = this.open(entry)
    this.add(entry)
    return entry.ready
  }

  // → Promise of `file`'s stat, as statOf() gives it (the same errors), for a miss
  // that opens it in `scope` next: where the scope can (ConfinedRoot.lookup()),
  // the name's stat and the open are one pool job, and the file joins the cache
  // open and unused, for the take() or acquire() that follows; a name that is
  // no regular file gives only its kind (see kindOf() in ./stat), all that
  // locateFile() asks of it. A file the cache has open already (its name not
  // remembered: a link, a directory no watch vouches for) is only stat'ed, as
  // take() needs.
  statToOpen (file, scope) {
    if (this.max === 0 || scope === UNCONFINED || this.entries.has(file)) return statOf(file)
    const openedAt = tick()
    return scope.lookup(file).then((opened) => {
      if (opened === null) return statOf(file)
      if (opened.fd === undefined) return kindOf(opened.directory)
      this.adopt(file, scope, opened, openedAt)
      return opened.stat
    })
  }

  // Caches `opened`, what scope.open(file) gives, begun at `openedAt`, as `file`'s
  // entry, unused; unless an entry for it is there, or opening, already: then
  // `opened` is closed (a different file's entry is evicted).
  adopt (file, scope, opened, openedAt) {
    const cached = this.entries.get(file)
    if (cached !== undefined) {
      if (cached.stat === null || (cached.proof === opened.proof && sameFile(cached.stat, opened.stat))) {
        opened.close(opened.fd)
        return
      }
      this.evict(cached)
    }
    const entry = new OpenFile(file, scope)
    entry.users = 0
    entry.hits = 0 // the take() that follows is its first use
    entry.openedAt = openedAt
    this.opened(entry, opened)
    entry.ready = Promise.resolve(entry)
    this.add(entry)
  }

  // Keeps the new `entry` (closed when evicted and unused) in the cache.
  add (entry) {
    this.unclosed.add(entry)
    entry.closed.then(() => this.unclosed.delete(entry))
    if (this.max > 0) {
      this.entries.set(entry.path, entry)
      this.trim()
      this.startSweeping()
    } else {
      entry.evicted = true
    }
  }

  // A file asked for twice, up to SMALL_FILE bytes (COPIED_FILE for a request
  // whose body is copied anyway: see ./open-file and use()), is read once into memory (within
  // the memory budget) and answered with one write from then on. The
  // read holds the entry like a response does, so its descriptor stays open; bytes
  // read from a file that changed meanwhile are dropped with the entry when the
  // change is seen, as a transfer's are.
  keepBody (entry) {
    entry.bodyTried = true
    const size = entry.stat.size
    if (entry.evicted || size === 0 || !this.memory.reserve(size)) return
    entry.users++
    const bytes = Buffer.allocUnsafe(size)
    readAt(entry.fd, bytes, 0, (err, read) => {
      if (!err && read === size && !entry.evicted) entry.body = bytes
      else this.memory.free(size)
      this.release(entry)
    })
  }

  // `copied`: the request's body is copied through user space anyway, so a file up
  // to COPIED_FILE may be kept (see keepBody()).
  use (entry, copied = false) {
    entry.users++
    entry.recentlyUsed = true
    entry.referenced = true
    if (++entry.hits >= 2 && !entry.bodyTried && entry.stat !== null &&
      keptInMemory(entry.stat.size, copied)) this.keepBody(entry)
    return entry
  }

  // One more user of `entry`, which it holds open as a response does (a
  // compression reading its descriptor): pair with release().
  hold (entry) {
    entry.users++
  }

  release (entry) {
    entry.users--
    if (entry.evicted && entry.users === 0) this.closeEntry(entry)
  }

  // What the cache holds now: open files, directories watched, bytes in memory.
  stats () {
    return {
      openFiles: this.entries.size,
      watchedDirectories: this.paths.watchedDirectories(),
      memoryBytes: this.memory.used
    }
  }

  // Closes every descriptor not in use now, and the others as soon as they are
  // released; root directories as soon as no open runs from them. Resolves once all
  // of them are closed. The cache stays usable (it reopens what it needs).
  clear () {
    for (const entry of this.entries.values()) this.evict(entry)
    for (const root of this.roots.values()) root.close()
    this.roots.clear()
    return Promise.all(Array.from(this.unclosed, (entry) => entry.closed)).then(() => {})
  }

  close () {
    return this.clear()
  }

  async open (entry) {
    entry.openedAt = tick()
    try {
      this.opened(entry, await entry.scope.open(entry.path))
      return entry
    } catch (err) {
      this.evict(entry)
      entry.markClosed() // nothing is left open: scope.open() closes what it refuses
      throw err
    }
  }

  // `entry` is open: what its scope's open() gave.
  opened (entry, { fd, stat, proof, close, link }) {
    entry.fd = fd
    entry.closeFd = close
    entry.proof = proof
    entry.nameIsLink = link
    entry.checkedAt = Date.now()
    entry.stat = stat // last: an entry with a stat is open
  }

  // Whether the open `entry` may still be used without a stat of its name: its
  // descriptor's fstat, taken again once `maxAge` ms (default CHECK_INTERVAL_MS)
  // have passed since the last, finds the file still linked and the same
  // (sameFile()). A file changed where no watch sees it is dropped here, its
  // descriptor closing once its users are done, and the caller looks its name
  // up again.
  isCurrent (entry, now = Date.now(), maxAge = CHECK_INTERVAL_MS) {
    if (now - entry.checkedAt < maxAge) return true
    let stat = null
    try {
      stat = fs.fstatSync(entry.fd)
    } catch {}
    if (stat !== null && stat.nlink > 0 && sameFile(stat, entry.stat)) {
      entry.checkedAt = now
      return true
    }
    this.evict(entry)
    return false
  }

  // `entry`'s file ended before the bytes its stat promised were sent (a transfer
  // failed with ERR_ZCOPY_TRUNCATED): it changed, and no request may use it again.
  truncated (entry) {
    this.evict(entry)
  }

  evict (entry) {
    if (this.entries.get(entry.path) === entry) this.entries.delete(entry.path)
    if (this.entries.size === 0) this.stopSweeping()
    if (entry.evicted) return
    entry.evicted = true
    this.paths.forget(entry)
    for (const listener of this.dropListeners.get(entry) ?? []) listener()
    if (entry.body !== null) {
      this.memory.free(entry.body.length)
      entry.body = null
    }
    if (entry.users === 0) this.closeEntry(entry)
  }

  closeEntry (entry) {
    entry.ready
      .then(() => entry.closeFd(entry.fd))
      .catch(() => {}) // a failed open closed what it had itself
      .finally(entry.markClosed)
  }

  // Evicts down to `max` entries, the least recently used first, as a clock
  // (second chance) approximates it: the Map's order is the order of admission;
  // an entry used since trim() last passed it is moved to the end instead, once.
  // A hit then costs no Map operation.
  trim () {
    for (const entry of this.entries.values()) {
      if (this.entries.size <= this.max) return
      if (entry.referenced) {
        entry.referenced = false
        this.entries.delete(entry.path)
        this.entries.set(entry.path, entry)
      } else {
        this.evict(entry)
      }
    }
  }

  // Evicts every entry proven against `proof`, a root identity that is no longer
  // current (its name now names another directory): those in use close once released.
  evictProvenBy (proof) {
    for (const entry of this.entries.values()) {
      if (entry.proof === proof) this.evict(entry)
    }
  }

  sweep () {
    // Roots first: one that names another directory now drops what was proven
    // against the old one (see evictProvenBy); one nothing cached is proven against
    // closes its directory descriptor.
    if (this.roots.size > 0) {
      const proven = new Set()
      for (const entry of this.entries.values()) proven.add(entry.proof)
      for (const root of this.roots.values()) {
        if (!proven.has(root.proof)) root.idle()
        else root.refresh()
      }
    }
    for (const entry of this.entries.values()) {
      if (entry.users === 0 && !entry.recentlyUsed) this.evict(entry)
      else entry.recentlyUsed = false
    }
  }

  startSweeping () {
    if (this.sweeper !== null) return
    this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs)
    this.sweeper.unref()
  }

  stopSweeping () {
    if (this.sweeper === null) return
    clearInterval(this.sweeper)
    this.sweeper = null
  }
}

module.exports = { OpenFileCache }
