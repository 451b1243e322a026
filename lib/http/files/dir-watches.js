'use strict'

// Change notification for the open-file cache: inotify, through fs.watch, on the
// directories that lead to cached files. A watch on a directory reports every
// entry of it that is created, deleted, renamed, written or has its attributes
// changed, and the directory itself moving or going away; so a file whose
// directories from the root down are all watched cannot change, be replaced or
// be moved away without an event naming it or one of its directories.
//
// `onChange(file)` gets the path that changed: the file or directory itself and
// everything below it must be treated as stale. Events come on the event loop:
// a change is seen once the loop has read its event (the same turn for a request
// that arrives after it).
//
// Watches are shared and counted: hold(dirs) takes one reference on each
// directory (watching it on first use), release(dirs) gives them back (the watch
// closes with its last reference). At most `max` directories are watched at once
// (inotify's watches are a per-user budget shared with every other program). A
// directory that cannot be watched (that bound, inotify's own limit: ENOSPC, a
// file system without notification, permissions) fails hold(), and the caller
// validates such files by other means: a stat per request, never an error.

const fs = require('node:fs')
const path = require('node:path')

// File systems where inotify sees only this host's changes, not the server's or
// other clients': statfs(2) f_type values (linux/magic.h).
const REMOTE_FILE_SYSTEMS = new Set([
  0x6969, // NFS
  0x517b, // SMB
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x65735546, // FUSE (sshfs, s3fs, ...)
  0x00c36400, // Ceph
  0x5346414f, // AFS
  0x01021997, // 9P (virtio-fs shares, WSL)
  0x47504653, // GPFS
  0x0bd00bd0 // Lustre
])

// → Promise of whether changes under `dir` are reported by inotify (false for
// network file systems, and where statfs is unavailable).
function notifiesChanges (dir) {
  return new Promise((resolve) => {
    fs.statfs(dir, (err, stats) => resolve(err === null && !REMOTE_FILE_SYSTEMS.has(stats.type)))
  })
}

// A count of watches set and changes heard, in every cache of the process: a
// lookup notes it when it begins (tick()), and quietSince() then tells whether
// watches already vouched for what it saw. Never goes back, so a tick outlives
// the watches (and the cache) it was taken with.
let clock = 0

// → the clock now: for quietSince().
function tick () {
  return clock
}

class DirectoryWatches {
  constructor (onChange, max = Infinity) {
    this.onChange = onChange
    this.max = max
    this.watches = new Map() // directory → { watcher, users }
  }

  // How many directories are watched now.
  get size () {
    return this.watches.size
  }

  // Whether `dir` is watched now.
  has (dir) {
    return this.watches.has(dir)
  }

  // Whether every directory of `dirs` was watched before `since` (a tick()) and no
  // change has been heard in any of them since: a lookup begun at `since` below
  // them saw what is there now, or a change it missed is still to be heard (its
  // event comes later and is treated then).
  quietSince (dirs, since) {
    for (const dir of dirs) {
      const watch = this.watches.get(dir)
      if (watch === undefined || watch.since > since || watch.changedAt > since) return false
    }
    return true
  }

  // Takes a reference on each directory of `dirs`, watching those not watched yet.
  // → true when every one is watched; false (and no reference kept) otherwise.
  hold (dirs) {
    for (let i = 0; i < dirs.length; i++) {
      if (!this.holdOne(dirs[i])) {
        this.release(dirs.slice(0, i))
        return false
      }
    }
    return true
  }

  holdOne (dir) {
    let watch = this.watches.get(dir)
    if (watch === undefined) {
      if (this.watches.size >= this.max) return false
      let watcher
      try {
        watcher = fs.watch(dir, { persistent: false }, (event, name) => this.changed(dir, name))
      } catch {
        return false
      }
      watch = { watcher, users: 0, since: ++clock, changedAt: 0 }
      // A watch that fails later (its directory gone, the queue overflowed) can
      // no longer vouch for anything below it.
      watcher.on('error', () => this.lost(dir))
      this.watches.set(dir, watch)
    }
    watch.users++
    return true
  }

  release (dirs) {
    for (const dir of dirs) {
      const watch = this.watches.get(dir)
      if (watch === undefined) continue
      if (--watch.users === 0) {
        this.watches.delete(dir)
        watch.watcher.close()
      }
    }
  }

  // An event for `name` in `dir`. libuv names a watched directory's own move or
  // deletion by the directory's base name: that is taken as the directory itself
  // changing too. No name: anything in `dir` may have changed.
  changed (dir, name) {
    const watch = this.watches.get(dir)
    if (watch !== undefined) watch.changedAt = ++clock
    if (name === null || name === undefined) return this.onChange(dir)
    const entry = String(name)
    if (entry === path.basename(dir)) this.onChange(dir)
    this.onChange(path.join(dir, entry))
  }

  lost (dir) {
    const watch = this.watches.get(dir)
    if (watch === undefined) return
    this.watches.delete(dir)
    watch.watcher.close()
    this.onChange(dir)
  }

  close () {
    for (const { watcher } of this.watches.values()) watcher.close()
    this.watches.clear()
  }
}

// The directories whose watches vouch for `file` below `root`: the directory
// that holds each symbolic link on the root's own path (`links`, from the
// outermost, the root itself included when it is one), where a deploy that swaps
// it renames (`current → releases/42`, with the root `current` or
// `current/public`); then the root and every directory between it and the file.
// A directory on the root's path that is no link is not watched from its parent:
// the writes to a file beside it (a log) would wake the server, as inotify
// reports every one of them.
// null when `file` is not below `root`.
function directoriesOf (root, file, links) {
  const dirs = [...new Set(links.map((link) => path.dirname(link))), root]
  const relative = path.relative(root, path.dirname(file))
  if (relative === '') return dirs
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null
  let dir = root
  for (const segment of relative.split(path.sep)) {
    dir = path.join(dir, segment)
    dirs.push(dir)
  }
  return dirs
}

module.exports = { DirectoryWatches, directoriesOf, notifiesChanges, tick }
