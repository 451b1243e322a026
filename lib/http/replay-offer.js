'use strict'

// What zcopy serve's native lane may replay (serveStatic's onReplayable): an
// answer that depends only on the request bytes the lane keys it by, heard
// with what it was made of and when that leaves (docs/internals.md, "Native
// lane: listener, hand-off, answer table").

const { memoryBody } = require('./files')

// Request headers after which an answer is no replay for others:
// If-None-Match and If-Modified-Since are part of a replay's key instead.
const REPLAY_SPOILERS = ['range', 'if-range', 'if-match', 'if-unmodified-since']

// Tells onReplayable of `server` (a FileServer) of an answer that depends only
// on the request's method, target, Host, Accept-Encoding, If-None-Match and
// If-Modified-Since, to a GET or HEAD without Range, If-Range, If-Match or
// If-Unmodified-Since: a 304, or a whole 200 of the file itself, of a
// precompressed sibling of a file whose siblings the cache keeps, or of a
// compressed variant (none pending, no better coding wanted). With the
// body's descriptor (valid during the call only; null for a variant kept
// in memory) and stat, `bytes` (the body when it is in memory, else null),
// `source` ({ fd, stat } of the file a sibling or variant stands for, which
// may change while the body's file does not; else null),
// whenDropped(listener), called once when the cache drops an entry the
// answer was made of or the store its variant, and used(), which counts a
// replay as a use of those entries (one a sweep or the LRU would otherwise
// find unused) and returns `bytes` as they are then.
function offerReplay (server, req, res, file, { sent, located }) {
  const { onReplayable } = server.options
  const { entry, variant } = file
  if (onReplayable === null || file.variantPending || file.provisional) return
  if (REPLAY_SPOILERS.some((name) => req.headers[name] !== undefined)) return
  if (res.statusCode === 304) {
    if (sent !== null) return
  } else {
    const size = entry === null ? file.bytes.length : entry.stat.size
    if (res.statusCode !== 200 || (sent === null ? req.method !== 'HEAD' : !sent.complete || sent.bytes !== size)) return
  }
  const { cache } = server
  // A sibling or variant answers for the located file: its entry must be
  // open, and a sibling's names watched with it (a new sibling then drops it).
  let source = null
  if (variant !== undefined || file.encoding !== null) {
    if (variant === undefined && cache.paths.siblingsOf(located) === null) return
    source = cache.take(located.path, located.stat, server.scopeOf(located))
    if (source === null) return
  }
  const entries = [entry, source].filter((held) => held !== null)
  try {
    onReplayable(req, res, {
      fd: entry === null ? null : entry.fd,
      stat: entry === null ? null : entry.stat,
      bytes: entry === null ? file.bytes : memoryBody(entry, false),
      source: source === null ? null : { fd: source.fd, stat: source.stat },
      whenDropped: (listener) => {
        let called = false
        const once = () => {
          if (called) return
          called = true
          listener()
        }
        for (const held of entries) cache.whenDropped(held, once)
        if (variant !== undefined) variant.whenRemoved(once)
      },
      used: () => {
        for (const held of entries) cache.release(cache.use(held))
        return entry === null ? null : memoryBody(entry, false)
      }
    })
  } finally {
    if (source !== null) cache.release(source)
  }
}

module.exports = { offerReplay }
