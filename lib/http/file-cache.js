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
// - Or, without that stat, while change notification vouches for it (lookup() and
//   remember()): a request path found to name an entry is remembered once inotify
//   watches every directory from the root down to the file (and the one holding
//   each symbolic link on the root's way, which a deploy may swap: see
//   directoriesOf), and the path
//   was found again, after the watches were set, to name the same file (or they
//   were set before its first lookup began, and nothing was heard since). Any event
//   on the file or a directory on its way drops the entry and every remembered
//   path through it. Where a watch cannot be set (network file systems, inotify's
//   limits, a symbolic link as the file's own name) nothing is remembered and the
//   per-request stat stays the rule.
// - Descriptors close when evicted (least recently used beyond `max`, idle for a
//   sweep period, or stale), and all of them, with the root directories, on clear()
//   (a server's 'close').
// - Responses hold an entry between take() or acquire() and release(); it is never
//   closed under them.

const fs = require('node:fs')
const path = require('node:path')
const { DirectoryWatches, directoriesOf, notifiesChanges, tick } = require('./dir-watches')
const { onClose } = require('./on-close')
const { ConfinedRoot, UNCONFINED } = require('./open-confined')
const { kindOf, lstatOf, statOf } = require('./stat')

const SWEEP_INTERVAL_MS = 10_000
const SMALL_FILE = 64 * 1024 // the largest file kept in memory, see keepBody()
// The largest kept for a request whose body is copied through user space anyway
// (TLS, HTTP/2, no addon), where sendfile cannot help: answered from memory as
// Node's own floor answers, not read again in chunks for every response.
const COPIED_FILE = 1024 * 1024

// Whether a file of `size` bytes is kept in memory, and answered from it, for a
// request whose body is (`copied`) or is not copied through user space anyway.
function keptInMemory (size, copied) {
  return size <= (copied ? COPIED_FILE : SMALL_FILE)
}

// The bytes to answer a request for `entry` with from memory, or null to send
// from its descriptor: a body above SMALL_FILE, kept for requests whose body is
// copied anyway, is not answered from memory to one sendfile can serve (one
// middleware behind an HTTPS and an HTTP server).
function memoryBody (entry, copied) {
  return entry.body !== null && keptInMemory(entry.body.length, copied) ? entry.body : null
}

// → Promise of whether `file`'s own name is a symbolic link (true when that
// cannot be told: not vouched for).
function isSymbolicLink (file) {
  return lstatOf(file).then((stat) => stat.isSymbolicLink(), () => true)
}

// → Promise of the paths on the way to `dir`, `dir` included, that are symbolic
// links, from the outermost. One that cannot be told is taken for a link: its
// parent is watched (a watch too many costs an event now and then).
function linksOnPath (dir) {
  const ways = []
  for (let at = dir; path.dirname(at) !== at; at = path.dirname(at)) ways.unshift(at)
  return Promise.all(ways.map(isSymbolicLink)).then((links) => ways.filter((way, i) => links[i]))
}

function sameFile (a, b) {
  return a === b || (a.ino === b.ino && a.dev === b.dev && a.size === b.size &&
    a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs)
}

const MAX_ROOTS = 64

class OpenFile {
  constructor (path, scope) {
    this.path = path
    this.scope = scope // how it is opened: UNCONFINED, or a ConfinedRoot
    this.fd = -1
    this.closeFd = null // closes `fd` the way it was opened
    this.proof = null // what it was proven against: its scope's proof at admission
    this.stat = null // the descriptor's fstat, set last: an entry with a stat is open
    this.openedAt = -1 // the tick() when its open began
    this.nameIsLink = null // whether its name's last component was a link then (null: not told)
    this.users = 1
    this.recentlyUsed = true // for the sweep (see sweep())
    this.referenced = false // used again since trim() last passed it (see trim())
    this.evicted = false
    this.ready = null
    this.closed = new Promise((resolve) => { this.markClosed = resolve })
    this.body = null // the file's bytes, once it is small and hot (see keepBody())
    this.hits = 1 // requests that used it, this one included
    this.bodyTried = false
    this.watched = null // the directories watched for it (see remember())
    this.watching = null // Promise of whether they could be (see watchable())
    this.unwatchable = false // no watch could be set for it
    this.keys = null // the request paths remembered as naming it
    this.guards = null // other names whose change drops it too (see guard())
    this.siblings = null // its precompressed siblings, while guarded (see serve-file.js)
    this.headers = null // its header values, computed once (see headers.js)
  }
}

class OpenFileCache {
  // `sweepIntervalMs`: an entry unused for one to two periods is closed.
  // `memoryBytes`: how many bytes of small, hot files may be kept in memory.
  // `maxWatches`: how many directories may be watched at once.
  constructor ({ max = 128, sweepIntervalMs = SWEEP_INTERVAL_MS, memoryBytes = 0, maxWatches = Infinity } = {}) {
    this.max = max
    this.maxWatches = maxWatches
    this.memoryBytes = memoryBytes
    this.memoryUsed = 0
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
    this.lookups = new Map() // request path key → OpenFile, see remember()
    this.watches = null // DirectoryWatches, made on first use
    this.notifying = new Map() // root → Promise of whether its file system reports changes
    this.relocating = new Set() // remember() calls waiting for their relocate()
    this.guarding = new Map() // a name → the entries its change drops, see guard()
    this.rootLinks = new Map() // root → Promise of the links on its way, see linksOf()
    this.changeListeners = [] // see onChange()
  }

  // Has `listener(path)` hear every change the watches report (see changed()),
  // as the entries do: compressed variants are dropped by the same rule.
  // → a function that stops it.
  onChange (listener) {
    this.changeListeners.push(listener)
    return () => {
      const at = this.changeListeners.indexOf(listener)
      if (at !== -1) this.changeListeners.splice(at, 1)
    }
  }

  // Takes `bytes` of the memory budget for something kept beside the files
  // (compressed variants): → whether they fit. Give them back with freeMemory().
  reserveMemory (bytes) {
    if (this.memoryUsed + bytes > this.memoryBytes) return false
    this.memoryUsed += bytes
    return true
  }

  freeMemory (bytes) {
    this.memoryUsed -= bytes
  }

  // Drops the entry of `file`, if any (closed once no response uses it).
  forgetFile (file) {
    const entry = this.entries.get(file)
    if (entry !== undefined) this.evict(entry)
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
        this.rootLinks.delete(root) // its name names another directory: its way may have changed
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

  // → the entry ({ path, stat }) that `key`, a resolved request path, was
  // remembered to name, for take() without a stat; or null.
  lookup (key) {
    const entry = this.lookups.get(key)
    if (entry === undefined) return null
    entry.recentlyUsed = true // not swept while asked for, even when a sibling is what is sent
    return entry
  }

  // Remembers that `key` names the open `entry`, below `root`, if change
  // notification can vouch for it from now on: its directories get watched, then
  // `relocate()` (a promise of the lookup that found it, run again) must find the
  // same file under the same, non-symlink, name, and no change may have been
  // reported meanwhile in a directory that vouches for it (see changed()): a
  // change that the second lookup did not see is reported after the watches were
  // set, so either before the key is kept (nothing kept) or after (it drops it).
  // `found` ({ path, stat }), what the first lookup found, begun at `since` (a
  // lookupTick()): when the watches were already set then and nothing was heard
  // since, it is as good as the second lookup, which is skipped (a pool round
  // trip per miss while a site's directories are watched).
  // → Promise, never rejected.
  async remember (key, entry, root, relocate, found = null, since = -1) {
    if (entry.evicted || entry.stat === null || this.max === 0 || !(await this.watchable(root, entry))) return
    if (entry.evicted || entry.watched === null) return
    let again = found
    if (found === null || !this.watches.quietSince(entry.watched, since)) {
      again = await this.lookAgain(entry, relocate)
      if (again === null || entry.evicted || entry.watched === null) return
    }
    if (again.path !== entry.path || !sameFile(again.stat, entry.stat)) return
    if (entry.keys === null) entry.keys = []
    if (!entry.keys.includes(key)) entry.keys.push(key)
    this.lookups.set(key, entry)
  }

  // remember()'s second lookup, `relocate()`: → its { path, stat }, or null when it
  // failed or a change was heard meanwhile in a directory that vouches for `entry`.
  async lookAgain (entry, relocate) {
    const waiting = { entry, changed: false }
    this.relocating.add(waiting)
    try {
      const again = await relocate()
      return waiting.changed ? null : again
    } catch {
      return null
    } finally {
      this.relocating.delete(waiting)
    }
  }

  // → the moment a lookup begins, for remember()'s `since`.
  lookupTick () {
    return tick()
  }

  // Whether remember() may still succeed for `file`: not when the cache keeps
  // nothing, nor when its entry is one no watch can vouch for.
  mayRemember (file) {
    const entry = this.entries.get(file)
    return this.max > 0 && (entry === undefined || !entry.unwatchable)
  }

  // → Promise of whether watches vouch for `entry`, set up on the first ask. An
  // entry no watch can vouch for stays on the per-request stat, and its later
  // requests do not retry the lstat and fs.watch calls.
  watchable (root, entry) {
    if (entry.watching === null) {
      entry.watching = this.watch(root, entry).then((watched) => {
        entry.unwatchable = !watched
        return watched
      })
    }
    return entry.watching
  }

  // → Promise: watches the directories that vouch for `entry`; false when one
  // cannot be (or the entry went meanwhile).
  async watch (root, entry) {
    let notifies = this.notifying.get(root)
    if (notifies === undefined) {
      notifies = notifiesChanges(root)
      this.notifying.set(root, notifies)
    }
    const found = this.linksOf(root)
    const links = await found
    const dirs = (await notifies) ? directoriesOf(root, entry.path, links) : null
    if (dirs === null || (await this.nameIsLink(entry, dirs)) || entry.evicted) return false
    if (this.watches === null) this.watches = new DirectoryWatches((changed) => this.changed(changed), this.maxWatches)
    if (!this.watches.hold(dirs)) return false
    // A change on the root's way came before the watches were set: they may not
    // be the ones that vouch for it.
    if (this.rootLinks.get(root) !== found || entry.evicted) {
      this.watches.release(dirs)
      return false
    }
    entry.watched = dirs
    return true
  }

  // Whether `entry`'s own name is a symbolic link, or may be. Its open's answer
  // (no link) stands while `dirs`, its parent among them, were watched before
  // that open began and nothing was heard from them since (a change after it is
  // still to be heard, and drops the entry then); otherwise an lstat, a pool
  // round trip, tells (→ a Promise then).
  nameIsLink (entry, dirs) {
    if (entry.nameIsLink === false && this.watches !== null && this.watches.quietSince(dirs, entry.openedAt)) return false
    return isSymbolicLink(entry.path)
  }

  // → Promise of the symbolic links on `root`'s way (linksOnPath), looked up
  // once, and again after an event on that way (see changed()) or once the root's
  // name has come to name another directory (a directory on the way replaced:
  // the sweep or a miss finds it; see scope()).
  linksOf (root) {
    let links = this.rootLinks.get(root)
    if (links === undefined) {
      links = linksOnPath(root)
      this.rootLinks.set(root, links)
    }
    return links
  }

  // Makes a change of any of `names`, paths in the watched directory of the
  // remembered `entry` (a sibling that may appear, change or go), drop the entry
  // as a change of its own file does, so that what was found by those names can
  // be kept with it. → false when no watch vouches for the entry.
  guard (entry, names) {
    if (entry.evicted || entry.watched === null) return false
    if (!names.every((name) => entry.watched.includes(path.dirname(name)))) return false
    if (entry.guards === null) entry.guards = []
    for (const name of names) {
      let guarded = this.guarding.get(name)
      if (guarded === undefined) {
        guarded = new Set()
        this.guarding.set(name, guarded)
      }
      guarded.add(entry)
      entry.guards.push(name)
    }
    return true
  }

  // inotify reported a change of `changed`: the entries at and below it, those it
  // guards, and the request paths that were found through it or may now find
  // it first (an index file for its directory's path; `name.ext` for `name`), are
  // no longer vouched for; a remember() under way for an entry in one of its
  // directories keeps nothing.
  changed (changed) {
    for (const listener of this.changeListeners) listener(changed)
    const exact = this.entries.get(changed)
    if (exact !== undefined) this.evict(exact)
    const guarded = this.guarding.get(changed)
    if (guarded !== undefined) for (const entry of Array.from(guarded)) this.evict(entry)
    const dir = path.dirname(changed)
    for (const waiting of this.relocating) {
      const watched = waiting.entry.watched
      if (watched === null || watched.includes(dir) || watched.includes(changed)) waiting.changed = true
    }
    this.lookups.delete(changed)
    this.lookups.delete(changed + path.sep)
    this.lookups.delete(dir + path.sep)
    const base = path.basename(changed)
    for (let dot = base.indexOf('.', 1); dot !== -1; dot = base.indexOf('.', dot + 1)) {
      this.lookups.delete(changed.slice(0, changed.length - base.length + dot))
    }
    // A change on a root's way (a link swapped where its parent is watched):
    // everything below it goes, and the links on that way are looked up again.
    let onRootsWay = false
    for (const root of this.notifying.keys()) {
      if (root === changed || root.startsWith(changed + path.sep)) {
        onRootsWay = true
        this.rootLinks.delete(root)
      }
    }
    // Not a directory anything was found through, nor on a root's way.
    if (!onRootsWay && !this.watches.has(changed)) return
    const below = changed + path.sep
    for (const entry of this.entries.values()) {
      if (entry.path.startsWith(below)) this.evict(entry)
    }
    for (const key of this.lookups.keys()) {
      if (key.startsWith(below)) this.lookups.delete(key)
    }
  }

  // An entry no longer vouched for by watches: its remembered paths are dropped and
  // its watches released.
  forget (entry) {
    if (entry.keys !== null) {
      for (const key of entry.keys) {
        if (this.lookups.get(key) === entry) this.lookups.delete(key)
      }
      entry.keys = null
    }
    if (entry.guards !== null) {
      for (const name of entry.guards) {
        const guarded = this.guarding.get(name)
        guarded.delete(entry)
        if (guarded.size === 0) this.guarding.delete(name)
      }
      entry.guards = null
      entry.siblings = null
    }
    if (entry.watched !== null) {
      this.watches.release(entry.watched)
      entry.watched = null
    }
  }

  // A file asked for twice, up to SMALL_FILE bytes (COPIED_FILE for a request
  // whose body is copied anyway: see use()), is read once into memory (within
  // `memoryBytes` in all) and answered with one write from then on. The
  // read holds the entry like a response does, so its descriptor stays open; bytes
  // read from a file that changed meanwhile are dropped with the entry when the
  // change is seen, as a transfer's are.
  keepBody (entry) {
    entry.bodyTried = true
    const size = entry.stat.size
    if (entry.evicted || size === 0 || this.memoryUsed + size > this.memoryBytes) return
    this.memoryUsed += size
    entry.users++
    const bytes = Buffer.allocUnsafe(size)
    fs.read(entry.fd, bytes, 0, size, 0, (err, read) => {
      if (!err && read === size && !entry.evicted) entry.body = bytes
      else this.memoryUsed -= size
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

  release (entry) {
    entry.users--
    if (entry.evicted && entry.users === 0) this.closeEntry(entry)
  }

  // What the cache holds now: open files, directories watched, bytes in memory.
  stats () {
    return {
      openFiles: this.entries.size,
      watchedDirectories: this.watches === null ? 0 : this.watches.size,
      memoryBytes: this.memoryUsed
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
    entry.stat = stat // last: an entry with a stat is open
  }

  evict (entry) {
    if (this.entries.get(entry.path) === entry) this.entries.delete(entry.path)
    if (this.entries.size === 0) this.stopSweeping()
    if (entry.evicted) return
    entry.evicted = true
    this.forget(entry)
    if (entry.body !== null) {
      this.memoryUsed -= entry.body.length
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

module.exports = { OpenFileCache, memoryBody }
