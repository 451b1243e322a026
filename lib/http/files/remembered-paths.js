'use strict'

// The request paths an open-file cache (./file-cache) remembers as naming one of
// its open files, so that the next request for such a path takes the file with no
// stat at all. A path is remembered only while change notification vouches for
// it: inotify watches every directory from the root down to the file (and the one
// holding each symbolic link on the root's way, which a deploy may swap: see
// directoriesOf), and the path was found again, after the watches were set, to
// name the same file (or they were set before its first lookup began, and nothing
// was heard since). Any event on the file or a directory on its way drops the
// entry (the cache's evict(), which calls forget() here) and every remembered
// path through it. Where a watch cannot be set (network file systems, inotify's
// limits, a symbolic link as the file's own name) nothing is remembered and the
// per-request stat stays the rule.
//
// The state is the cache's and lives beside it: the remembered paths, the
// watches, the roots' file systems and the links on their way, the names that
// guard an entry (its precompressed siblings), and who hears of changes. On each
// entry (an OpenFile) it keeps `watched`, `watching`, `unwatchable`, `keys`,
// `guards` and `siblings`.

const path = require('node:path')
const { changesPending } = require('../../engine')
const { DirectoryWatches, directoriesOf, notifiesChanges, tick } = require('./dir-watches')
const { OpenFile } = require('./open-file')
const { lstatOf, sameFile } = require('./stat')

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

// Whether change events may be waiting, unread, for the watches
// (./dir-watches: fs.watch, libuv's inotify). A request read earlier in the
// same poll of the event loop than the event of a change made before it was
// sent would otherwise be answered from a remembered entry (epoll reports a
// socket that was ready in the previous turn first). The addon's
// changesPending() asks the loop's inotify queue (src/pending_changes.cc).
// → true: events are waiting (the request looks its name up, as a miss does,
// and the loop reads them meanwhile); false: none; null: it cannot be told (no
// addon, or the queue cannot be asked).
function eventsWaiting () {
  return changesPending === null ? null : changesPending()
}

class RememberedPaths {
  // `cache`: the OpenFileCache whose entries the paths name (its `max`,
  // entryOf(), isCurrent(), evict(), forgetFile() and forgetBelow() are used); `maxWatches`: how many
  // directories may be watched at once.
  constructor (cache, maxWatches) {
    this.cache = cache
    this.maxWatches = maxWatches
    this.lookups = new Map() // request path key → OpenFile, see remember()
    this.watches = null // DirectoryWatches, made on first use
    this.notifying = new Map() // root → Promise of whether its file system reports changes
    this.relocating = new Set() // Rememberings waiting for their second lookup (see finish())
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

  // → the entry ({ path, stat }) that `key`, a resolved request path, was
  // remembered to name, for the cache's take() without a stat; or null. Watches
  // vouch for the names, once every event they have had is read: null while
  // some wait (eventsWaiting below), and the name is looked up. The descriptors'
  // fstats, at most a second old, vouch for changes no watch reports
  // (OpenFileCache.isCurrent()): the entry's, and its precompressed siblings'
  // where the cache has them open. Where waiting events cannot be told (no
  // addon), the entry's fstat is taken on every lookup: its file replaced,
  // rewritten or removed is seen the same turn; a folder on its way renamed is
  // seen once its event is read.
  lookup (key) {
    const entry = this.lookups.get(key)
    if (entry === undefined) return null
    const pending = eventsWaiting()
    if (pending === true) return null
    const now = Date.now()
    if (!this.cache.isCurrent(entry, now, pending === null ? 0 : undefined)) return null
    if (Array.isArray(entry.siblings) && !this.siblingsCurrent(entry.siblings, now)) {
      this.cache.evict(entry) // its siblings are looked up again with it
      return null
    }
    entry.recentlyUsed = true // not swept while asked for, even when a sibling is what is sent
    return entry
  }

  // Whether the open entries of `siblings` ([{ path, stat }]) are current (one
  // that is not is dropped).
  siblingsCurrent (siblings, now) {
    let current = true
    for (const sibling of siblings) {
      const open = this.cache.entryOf(sibling.path)
      if (open !== undefined && open.stat !== null && !this.cache.isCurrent(open, now)) current = false
    }
    return current
  }

  // Remembering that `key` names the open `entry`, below `root`, if change
  // notification can vouch for it from now on, takes two steps. This one sets
  // watches on its directories: → Promise of a Remembering, or null when no
  // watch can vouch for it; never rejected. Then the caller looks `key` up
  // again unless `remembering.lookedUp` (see finish()). `found` ({ path,
  // stat }), what the first lookup found, begun at `since` (a lookupTick()):
  // when the watches were already set then and nothing was heard since, it is
  // as good as a second lookup, which is skipped (a pool round trip per miss
  // while a site's directories are watched).
  async remember (entry, { key, root, found = null, since = -1 }) {
    if (entry.evicted || entry.stat === null || this.cache.max === 0 || !(await this.watchable(root, entry))) return null
    if (entry.evicted || entry.watched === null) return null
    // Asked once now that a watch is set, the addon readies its check (an
    // io_uring beside libuv's inotify descriptor, for as long as the loop
    // lives): its descriptor comes with the watches, not with a later request.
    eventsWaiting()
    const lookedUp = found !== null && this.watches.quietSince(entry.watched, since)
    const remembering = { entry, key, found: lookedUp ? found : null, lookedUp, changed: false }
    if (!lookedUp) this.relocating.add(remembering)
    return remembering
  }

  // The second step: `again` ({ path, stat }, or null when it failed), what the
  // caller's second lookup found after the watches were set (ignored when
  // `remembering.lookedUp`). The key is kept if that is the same file under the
  // same, non-symlink, name, and no change was reported meanwhile in a
  // directory that vouches for it (see changed()): a change that the second
  // lookup did not see is reported after the watches were set, so either
  // before the key is kept (nothing kept) or after (it drops it).
  finish (remembering, again) {
    this.relocating.delete(remembering)
    const { entry, key } = remembering
    if (remembering.lookedUp) again = remembering.found
    if (again === null || remembering.changed || entry.evicted || entry.watched === null) return
    if (again.path !== entry.path || !sameFile(again.stat, entry.stat)) return
    if (entry.keys === null) entry.keys = []
    if (!entry.keys.includes(key)) entry.keys.push(key)
    this.lookups.set(key, entry)
  }

  // → the moment a lookup begins, for remember()'s `since`.
  lookupTick () {
    return tick()
  }

  // Whether remember() may still succeed for `file`: not when the cache keeps
  // nothing, nor when its entry is one no watch can vouch for.
  mayRemember (file) {
    const entry = this.cache.entryOf(file)
    return this.cache.max > 0 && (entry === undefined || !entry.unwatchable)
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
  // the sweep or a miss finds it; see OpenFileCache.scope()).
  linksOf (root) {
    let links = this.rootLinks.get(root)
    if (links === undefined) {
      links = linksOnPath(root)
      this.rootLinks.set(root, links)
    }
    return links
  }

  // Keeps `lookup` (a promise of the precompressed siblings found by `names`)
  // with `located` when it is a remembered entry whose watches vouch for those
  // names (see guard()): a change of either drops the entry, siblings and all.
  // Otherwise nothing is kept.
  keepSiblings (located, names, lookup) {
    if (!(located instanceof OpenFile) || !this.guard(located, names)) return
    located.siblings = lookup
    lookup.then((siblings) => {
      if (located.siblings === lookup) located.siblings = siblings // not dropped meanwhile
    }, () => {})
  }

  // The precompressed siblings kept for `located` (a promise of them while
  // they are looked up), or null: none kept (not a remembered entry, not
  // guarded, or dropped).
  siblingsOf (located) {
    return located instanceof OpenFile ? located.siblings : null
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
    this.cache.forgetFile(changed)
    const guarded = this.guarding.get(changed)
    if (guarded !== undefined) for (const entry of Array.from(guarded)) this.cache.evict(entry)
    const dir = path.dirname(changed)
    for (const remembering of this.relocating) {
      const watched = remembering.entry.watched
      if (watched === null || watched.includes(dir) || watched.includes(changed)) remembering.changed = true
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
    this.cache.forgetBelow(below)
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

  // `root`'s name has come to name another directory: the links on its way are
  // looked up again (see linksOf()).
  rootMoved (root) {
    this.rootLinks.delete(root)
  }

  // How many directories are watched now.
  watchedDirectories () {
    return this.watches === null ? 0 : this.watches.size
  }
}

module.exports = { RememberedPaths }
