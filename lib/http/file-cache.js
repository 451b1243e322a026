'use strict'

// An open-file cache, like nginx's open_file_cache: one FileHandle, its fstat and
// its real path per file path, shared by every response sending that file, so a
// hit costs no open/fstat/close thread-pool round trips.
//
// Correctness rules:
// - An entry is used only while a fresh stat of its path (taken by the caller on
//   every request) still names the same file: same device, inode, size, mtime and
//   ctime. A replaced, truncated or rewritten file gets a new entry, so stale bytes
//   or headers are never served; the old handle closes once its last user is done.
// - Handles close when evicted (least recently used beyond `max`, idle for a sweep
//   period, or stale), and all of them on clear() (a server's 'close').
// - Responses hold an entry between take() or acquire() and release(); it is never
//   closed under them.

const fsp = require('node:fs/promises')

const SWEEP_INTERVAL_MS = 10_000

function sameFile (a, b) {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size &&
    a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
}

// The resolved path of an open file, or null when it cannot be pinned down (the
// path moved between open and realpath): callers then treat it as unverifiable.
async function realPathOf (file, stat) {
  try {
    const real = await fsp.realpath(file)
    const realStat = await fsp.stat(real)
    return realStat.ino === stat.ino && realStat.dev === stat.dev ? real : null
  } catch {
    return null
  }
}

class OpenFile {
  constructor (path) {
    this.path = path
    this.handle = null
    this.stat = null // set last: an entry with a stat is open
    this.realPath = null
    this.users = 1
    this.recentlyUsed = true
    this.evicted = false
    this.ready = null
    this.closed = new Promise((resolve) => { this.markClosed = resolve })
  }
}

class OpenFileCache {
  // `sweepIntervalMs`: an entry unused for one to two periods is closed.
  constructor ({ max = 128, sweepIntervalMs = SWEEP_INTERVAL_MS } = {}) {
    this.max = max
    this.sweepIntervalMs = sweepIntervalMs
    this.entries = new Map()
    this.unclosed = new Set() // every entry whose handle is not closed yet, cached or not
    this.sweeper = null
    this.servers = new WeakSet()
  }

  // Clears the cache when `server` closes (once per server; null is ignored).
  clearOnClose (server) {
    if (!server || this.servers.has(server)) return
    this.servers.add(server)
    server.once('close', () => { this.clear() })
  }

  // → the OpenFile for `file` when it is open here and still the file whose stat
  // the caller just took, else null (then acquire()). Pair with release(). The
  // common case, a hit, without a promise.
  take (file, stat) {
    const cached = this.entries.get(file)
    if (cached === undefined || cached.stat === null || !sameFile(cached.stat, stat)) return null
    return this.use(cached)
  }

  // → Promise<OpenFile> for `file`, whose current stat the caller just took.
  // Rejects with the fs error when it cannot be opened. Pair with release().
  acquire (file, stat) {
    const cached = this.entries.get(file)
    if (cached !== undefined) {
      if (cached.stat === null || sameFile(cached.stat, stat)) return this.use(cached).ready
      this.evict(cached)
    }
    const entry = new OpenFile(file)
    this.unclosed.add(entry)
    entry.closed.then(() => this.unclosed.delete(entry))
    entry.ready = this.open(entry)
    if (this.max > 0) {
      this.entries.set(file, entry)
      this.trim()
      this.startSweeping()
    } else {
      entry.evicted = true
    }
    return entry.ready
  }

  use (entry) {
    entry.users++
    entry.recentlyUsed = true
    this.entries.delete(entry.path) // re-inserted last: the Map's order is the LRU order
    this.entries.set(entry.path, entry)
    return entry
  }

  release (entry) {
    entry.users--
    if (entry.evicted && entry.users === 0) this.close(entry)
  }

  // Closes every handle not in use now, and the others as soon as they are
  // released. Resolves once all of them are closed.
  clear () {
    for (const entry of this.entries.values()) this.evict(entry)
    return Promise.all(Array.from(this.unclosed, (entry) => entry.closed)).then(() => {})
  }

  async open (entry) {
    try {
      entry.handle = await fsp.open(entry.path, 'r')
      const stat = await entry.handle.stat()
      entry.realPath = await realPathOf(entry.path, stat)
      entry.stat = stat
      return entry
    } catch (err) {
      this.evict(entry)
      if (entry.handle !== null) await entry.handle.close().catch(() => {})
      entry.markClosed()
      throw err
    }
  }

  evict (entry) {
    if (this.entries.get(entry.path) === entry) this.entries.delete(entry.path)
    if (this.entries.size === 0) this.stopSweeping()
    if (entry.evicted) return
    entry.evicted = true
    if (entry.users === 0) this.close(entry)
  }

  close (entry) {
    entry.ready
      .then(() => entry.handle.close())
      .catch(() => {}) // a failed open closed what it had itself
      .finally(entry.markClosed)
  }

  // Least recently used first.
  trim () {
    for (const entry of this.entries.values()) {
      if (this.entries.size <= this.max) return
      this.evict(entry)
    }
  }

  sweep () {
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
