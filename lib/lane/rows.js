'use strict'

// The bounds of the native lane's answer table (issue 64). A row costs a
// descriptor (the lane's dup of its file), memory (its head, and its body when
// the cache keeps the file in memory) and a listener on its cache entry, and
// its key holds request bytes a client chooses (Accept-Encoding,
// If-None-Match, If-Modified-Since, Range, Host): unbounded, a client cycling
// them would have the lane take every descriptor and any amount of memory. So:
// - at most as many rows as the open-file cache holds files by default (a
//   quarter of the descriptors, 128 to 8,192: the rows' dups take no more
//   descriptors than the cache), the oldest forgotten first (a bound below
//   the cache's would have the lane forget and relearn rows for ever on a
//   site of more files: 5,000 files of 4 KiB went at 8k req/s with 1,024
//   rows, 89k with room for all);
// - at most PER_FILE rows registered for one file while its cache entry
//   lives (rows forgotten still count until the entry leaves: this also
//   bounds the listeners an entry holds), enough for the few encodings,
//   methods and conditions browsers send;
// - at most BODY_BYTES of bodies copied into the lane; past them a row sends
//   by sendfile from its descriptor, and one with no file (a variant kept in
//   memory only) is not registered.
// JavaScript answers whatever the lane has no row for: a bound costs speed,
// never an answer.

const { defaultMaxOpenFiles } = require('../http')

const MAX_ROWS = defaultMaxOpenFiles()
const PER_FILE = 8
const BODY_BYTES = 32 * 1024 * 1024

class LaneRows {
  constructor (lane) {
    this.lane = lane
    this.ids = new Map() // request key → row id, oldest first
    this.uses = new Map() // row id → what counts a hit as a use of its cache entry
    this.bodies = new Map() // row id → bytes of its body copied into the lane
    this.bodyBytes = 0
    this.perFile = new Map() // file identity → rows registered while its entry lives
  }

  // Whether `key` has a row already.
  has (key) {
    const id = this.ids.get(key)
    return id !== undefined && this.lane.has(id)
  }

  // Whether a row for `file` (its identity, or null) may be registered.
  admits (file) {
    return file === null || (this.perFile.get(file) ?? 0) < PER_FILE
  }

  // `bytes` if the lane may copy them as a body, else null.
  bodyRoom (bytes) {
    return bytes !== null && this.bodyBytes + bytes.length <= BODY_BYTES ? bytes : null
  }

  // Row `id` was added for `key`, with `body` (bytes or null) copied; `used`
  // counts a hit as a use of its entry; `whenDropped` says when it leaves.
  added (key, id, { file, body, used, whenDropped }) {
    if (this.ids.has(key)) this.forget(key) // a row the lane dropped (its file changed)
    while (this.ids.size >= MAX_ROWS) this.forget(this.ids.keys().next().value)
    this.ids.set(key, id)
    this.uses.set(id, used)
    this.countBody(id, body)
    if (file !== null) this.perFile.set(file, (this.perFile.get(file) ?? 0) + 1)
    whenDropped(() => {
      if (this.ids.get(key) === id) this.ids.delete(key)
      this.drop(id)
      if (file === null) return
      const left = this.perFile.get(file) - 1
      if (left > 0) this.perFile.set(file, left)
      else this.perFile.delete(file)
    })
  }

  // The hits since the last call count as uses of their entries; a row whose
  // file the cache came to keep in memory gets its bytes (if there is room).
  takeHits () {
    for (const id of this.lane.takeHits()) {
      const bytes = this.uses.get(id)?.() ?? null
      if (bytes === null || this.bodies.has(id) || this.bodyRoom(bytes) === null) continue
      this.lane.setBody(id, bytes)
      this.countBody(id, bytes)
    }
  }

  countBody (id, body) {
    if (body === null) return
    this.bodies.set(id, body.length)
    this.bodyBytes += body.length
  }

  forget (key) {
    const id = this.ids.get(key)
    this.ids.delete(key)
    this.drop(id)
  }

  drop (id) {
    this.lane.forget(id)
    this.uses.delete(id)
    this.bodyBytes -= this.bodies.get(id) ?? 0
    this.bodies.delete(id)
  }
}

module.exports = { LaneRows, MAX_ROWS, PER_FILE }
