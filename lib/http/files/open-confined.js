'use strict'

// Opening the file a response will send. One rule, proven on the descriptor that
// was opened, never on a name checked before: a served file is a regular file,
// and, under a root, one that lies beneath that root.
//
// - Every open is O_NONBLOCK (and O_NOCTTY): a FIFO or a device swapped in for a
//   file after its stat must not park a thread-pool thread in open(2). The
//   descriptor is then fstat'ed, and anything but a regular file is refused with
//   the 404 the stat path gives. Headers and bytes come from that fstat.
// - Under a root: the root directory is opened once (O_DIRECTORY) and kept; a file
//   is opened from it with the addon's openBeneath (openat2, RESOLVE_BENEATH |
//   RESOLVE_NO_MAGICLINKS: the kernel refuses any step out of it). Where that is
//   missing (no addon, ENOSYS) or refuses a path that may still be fine (EXDEV:
//   an absolute symlink, or `..`, that lands back inside the root), the file is
//   opened by name and the descriptor itself is checked: its /proc/self/fd link,
//   the kernel's name for what was opened, must lie beneath the root descriptor's
//   own /proc/self/fd link.
// - An open also tells, when it can at no cost, whether the name's last component
//   is a symbolic link (`link`: the addon's open tries O_NOFOLLOW first), which
//   the open-file cache needs before it may remember the name; null when it
//   cannot (then the cache asks an lstat).
// - A scope's `proof` is what an opened file was proven against; the open-file
//   cache keeps it with the entry and serves the entry only while the scope's
//   proof is still the same object. A root's proof is the identity (dev/ino, kept
//   descriptor) of the directory its name named when the file was opened; when
//   the name comes to name another directory (a deploy swapping a symlink), a
//   miss re-resolves it and every entry proven against the old one stops matching.

const fs = require('node:fs')
const path = require('node:path')
const { closeFd, lookupBeneath, openBeneath } = require('../../engine')
const { HttpError } = require('../common')
const { statOf } = require('./stat')

const { O_RDONLY, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = fs.constants
const FILE_FLAGS = O_RDONLY | O_NONBLOCK | O_NOCTTY
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NONBLOCK

// openat2 answers that do not mean "no such file": the name may still lead to a
// file beneath the root (an absolute or `..` symlink back inside: EXDEV; a rename
// race on `..`: EAGAIN; a magic link: ELOOP), so the descriptor check decides.
const TRY_BY_NAME = new Set(['EXDEV', 'EAGAIN', 'ELOOP'])
// openat2 is missing (ENOSYS), or refused outright by a seccomp profile that
// predates it (EPERM, which open(2) of a path never gives for O_RDONLY).
const NO_OPENAT2 = new Set(['ENOSYS', 'EPERM'])

let beneathAvailable = openBeneath !== null
const lookupAvailable = lookupBeneath !== null

function openFd (file, flags) {
  return new Promise((resolve, reject) => {
    fs.open(file, flags, (err, fd) => err ? reject(err) : resolve(fd))
  })
}

// Each descriptor is closed by what opened it: in a Worker, Node warns when
// fs.close() closes a descriptor its fs did not open (the addon's).
const byFs = {
  close: (fd) => new Promise((resolve) => fs.close(fd, () => resolve())),
  closeSync: (fd) => fs.closeSync(fd)
}
const byAddon = closeFd === null ? null : {
  close: (fd) => {
    try {
      closeFd(fd)
    } catch {
      // released all the same (Linux closes the descriptor even when close fails)
    }
    return Promise.resolve()
  },
  closeSync: (fd) => closeFd(fd)
}

function refused (reason) {
  return new HttpError(404, { cause: new Error(reason) })
}

function isBeneath (file, dir) {
  return file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep)
}

// The fstat of `fd` once it is shown to be servable (`check`, if any, passes);
// otherwise `fd` is closed, before the refusal is thrown (a read-only descriptor:
// nothing to flush, so closing it here is as quick as a stat).
function admit (fd, check, opener) {
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw refused('not a regular file')
    if (check !== null && !check(fd)) throw refused('outside the root')
    return stat
  } catch (err) {
    opener.closeSync(fd)
    throw err
  }
}

// What an open gives for `opened` ({ fd, link }, the addon's answer), a
// descriptor the kernel opened beneath `identity`'s directory: nothing left to
// prove but that it is a regular file (else admit() closes it and throws).
function admitBeneath ({ fd, link }, identity) {
  return { fd, stat: admit(fd, null, byAddon), proof: identity, close: byAddon.close, link }
}

// No root (sendFile with an absolute path), or allowSymlinksOutsideRoot: any
// regular file the name leads to.
class Unconfined {
  constructor () {
    this.proof = this
  }

  // → Promise<{ fd, stat, proof, link }>
  async open (file) {
    const fd = await openFd(file, FILE_FLAGS)
    return { fd, stat: admit(fd, null, byFs), proof: this, close: byFs.close, link: null }
  }

  close () {}
}

const UNCONFINED = new Unconfined()

// One opening of a root directory: its descriptor and identity. Retired when the
// root's name names another directory or the cache is cleared; its descriptor
// closes once no open that started from it is still running.
class RootIdentity {
  // `fd`: the directory, opened with DIRECTORY_FLAGS.
  constructor (fd) {
    this.fd = fd
    try {
      const stat = fs.fstatSync(fd)
      this.dev = stat.dev
      this.ino = stat.ino
    } catch (err) {
      fs.closeSync(fd)
      throw err
    }
    this.users = 0
    this.retired = false
  }

  // → Promise<RootIdentity> of the directory `dir` names now.
  static async open (dir) {
    return new RootIdentity(await openFd(dir, DIRECTORY_FLAGS))
  }

  sameAs (stat) {
    return this.dev === stat.dev && this.ino === stat.ino
  }

  // Whether open descriptor `fd` is on something beneath this directory, by the
  // kernel's current names for both.
  contains (fd) {
    return isBeneath(fs.readlinkSync(`/proc/self/fd/${fd}`), fs.readlinkSync(`/proc/self/fd/${this.fd}`))
  }

  release () {
    this.users--
    if (this.retired && this.users === 0) fs.closeSync(this.fd)
  }

  retire () {
    if (this.retired) return
    this.retired = true
    if (this.users === 0) fs.closeSync(this.fd)
  }
}

// A served root: files are opened beneath it, and proven so.
class ConfinedRoot {
  // `onRetire(proof)`, if given, runs when the root's name has come to name another
  // directory and `proof`, the old identity, stops being current (a deploy swapped
  // the symlink): the open-file cache then drops the entries proven against it.
  constructor (dir, onRetire = null) {
    this.path = dir
    this.proof = null // the current RootIdentity once one was opened
    this.statting = null // the stat of the root's name under way, see statName()
    this.closed = false
    this.onRetire = onRetire
  }

  // → Promise of the identity of the directory the root's name names now, held:
  // release() it. Runs on every miss (one stat, on the thread pool; misses that
  // come while one is under way share it, as if they had come a moment earlier);
  // a hit only compares proofs. Whatever ran meanwhile, the identity is taken and
  // held in the same turn as it is found current, so no retire() can close it in
  // between.
  async use () {
    const stat = await this.statName()
    if (this.proof !== null && this.proof.sameAs(stat)) return this.hold(this.proof)
    const opened = await RootIdentity.open(this.path)
    const current = this.proof
    if (current !== null && current.sameAs(opened)) {
      opened.retire() // another miss got there first
      return this.hold(current)
    }
    if (this.closed) {
      opened.retired = true // a request still running after clear(): kept by nobody
    } else {
      this.proof = opened
      if (current !== null) {
        current.retire()
        if (this.onRetire !== null) this.onRetire(current)
      }
    }
    return this.hold(opened)
  }

  // → Promise of the stat of the root's name: the one under way, or a new one.
  statName () {
    if (this.statting === null) {
      const statting = this.statting = statOf(this.path)
      const done = () => { if (this.statting === statting) this.statting = null }
      statting.then(done, done)
    }
    return this.statting
  }

  hold (identity) {
    identity.users++
    return identity
  }

  // Re-resolves the root's name now (the sweep's check, for a root whose files are
  // all cache hits: a deploy that kept the same files, hard-linked, never misses).
  // → Promise of whether the proof changed. A root that cannot be resolved now is
  // left as is.
  async refresh () {
    const before = this.proof
    try {
      (await this.use()).release()
    } catch {
      return false
    }
    return this.proof !== before
  }

  // Closes the root directory's descriptor while nothing proven against it is
  // cached (the next open reopens it); unlike close(), the root stays usable.
  idle () {
    if (this.proof === null) return
    this.proof.retire()
    this.proof = null
  }

  relative (file) {
    const relative = path.relative(this.path, file)
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) throw refused('not below the root')
    return relative
  }

  // → Promise<{ fd, stat, proof, close, link }>; rejects with the fs error, or a
  // 404 HttpError for a file that is not regular or not beneath the root.
  async open (file) {
    const relative = this.relative(file)
    const identity = await this.use()
    try {
      if (beneathAvailable) {
        let opened = null
        try {
          opened = await openBeneath(identity.fd, relative)
        } catch (err) {
          if (NO_OPENAT2.has(err.code)) beneathAvailable = false
          else if (!TRY_BY_NAME.has(err.code)) throw err
        }
        if (opened !== null) return admitBeneath(opened, identity) // beneath: the kernel proved it
      }
      const fd = await openFd(file, FILE_FLAGS)
      return { fd, stat: admit(fd, (opened) => identity.contains(opened), byFs), proof: identity, close: byFs.close, link: null }
    } finally {
      identity.release()
    }
  }

  // A miss's lookup of `file` and its open as one pool job, where the addon can and
  // this root was resolved before: → Promise of what open() gives when `file`'s
  // name is a regular file, opened beneath the root's current directory; of
  // { directory } (whether it is one, as fs.stat tells) when it is no regular
  // file; of null when the job could not tell, or the file could not be opened
  // so (the caller then stats and opens as before: statOf(), open()); rejects
  // with the name's stat error, fs.stat's.
  async lookup (file) {
    const identity = this.proof
    if (!beneathAvailable || !lookupAvailable || identity === null || file === this.path || !isBeneath(file, this.path)) return null
    this.hold(identity)
    let opened
    try {
      opened = await lookupBeneath(identity.fd, path.relative(this.path, file), file, this.path)
    } catch (err) {
      if (err.syscall === 'stat') throw err
      if (NO_OPENAT2.has(err.code)) beneathAvailable = false
      return null
    } finally {
      identity.release()
    }
    if (opened === null || opened.fd === undefined) return opened
    if (this.proof !== identity) { // retired meanwhile: proven against a directory no longer current
      byAddon.close(opened.fd)
      return null
    }
    try {
      return admitBeneath(opened, identity)
    } catch {
      return null // not a regular file by now (admit() closed it)
    }
  }

  // → Promise; rejects with a 404 HttpError unless `directory` (about to be
  // redirected to) is beneath the root.
  async checkDirectory (directory) {
    let inside = false
    try {
      const identity = await this.use()
      try {
        const fd = await openFd(directory, DIRECTORY_FLAGS)
        try {
          inside = identity.contains(fd)
        } finally {
          fs.closeSync(fd)
        }
      } finally {
        identity.release()
      }
    } catch {
      // gone or unreadable: unverifiable, so refused
    }
    if (!inside) throw refused('outside the root')
  }

  close () {
    this.closed = true
    if (this.proof !== null) this.proof.retire()
    this.proof = null
  }
}

module.exports = { ConfinedRoot, UNCONFINED }
