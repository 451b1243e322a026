'use strict'

// One entry of the open-file cache (./file-cache): a file's descriptor, its
// fstat and, once small and hot, its bytes; with the state of the paths
// remembered as naming it (./remembered-paths). Its fields are written by the
// cache and remembered-paths alone. Its clients (the handlers, the variant
// store, the adapters' bodies) hold it between the cache's take()/acquire()
// and release(), and read four fields, which do not change while they hold it:
// `path`, `fd`, `stat` (the descriptor's fstat) and `proof` (the scope's proof
// it was admitted on, to compare, never to use); and ask isOpen(). The rest is
// the cache's.

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

class OpenFile {
  constructor (path, scope) {
    this.path = path
    this.scope = scope // how it is opened: UNCONFINED, or a ConfinedRoot
    this.fd = -1
    this.closeFd = null // closes `fd` the way it was opened
    this.proof = null // what it was proven against: its scope's proof at admission
    this.stat = null // the descriptor's fstat, set last: an entry with a stat is open
    this.openedAt = -1 // the tick() when its open began
    this.checkedAt = 0 // when its descriptor's stat was last found unchanged (Date.now(); see isCurrent())
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
    // Its remembered paths' state (see ./remembered-paths):
    this.watched = null // the directories watched for it (see remember())
    this.watching = null // Promise of whether they could be (see watchable())
    this.unwatchable = false // no watch could be set for it
    this.keys = null // the request paths remembered as naming it
    this.guards = null // other names whose change drops it too (see guard())
    this.siblings = null // its precompressed siblings, while guarded (see keepSiblings())
  }

  // Whether it is open and still the cache's: not yet dropped (a change, an
  // eviction, clear()); its descriptor stays open while someone holds it.
  isOpen () {
    return this.stat !== null && !this.evicted
  }
}

module.exports = { OpenFile, keptInMemory, memoryBody }
