'use strict'

// What zcopy serve's native lane may replay (serveStatic's onReplayable): an
// answer that depends only on the request bytes the lane keys it by, heard
// with what it was made of and when that leaves (docs/internals.md, "Native
// lane: listener, hand-off, answer table").

const { memoryBody } = require('../files')

// Request headers after which an answer is no replay for others:
// If-None-Match, If-Modified-Since and Range are part of a replay's key instead.
const REPLAY_SPOILERS = ['if-range', 'if-match', 'if-unmodified-since']

// The one range a 206 of `size` bytes sends ({ start, end }), from the
// Content-Range it was answered with; null if there is none such.
function rangeOf (res, size) {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.getHeader('content-range')))
  if (match === null || Number(match[3]) !== size) return null
  return { start: Number(match[1]), end: Number(match[2]) }
}

// Tells onReplayable of `server` (a FileServer) of an answer that depends only
// on the request's method, target, Host, Accept-Encoding, If-None-Match,
// If-Modified-Since and Range, to a GET or HEAD without If-Range, If-Match or
// If-Unmodified-Since: a 304; a 206 of one range of the file itself
// (`range`: { start, end }); or a whole 200 of the file itself, of a
// precompressed sibling of a file whose siblings the cache keeps, or of a
// compressed variant (none pending, no better coding wanted). With the
// body's descriptor (valid during the call only; null for a variant kept
// in memory) and stat, `bytes` (the body when it is in memory, else null),
// `source` ({ fd, stat } of the file a sibling or variant stands for, which
// may change while the body's file does not; else null),
// whenDropped(listener), called once when the cache drops an entry the
// answer was made of or the store its variant, and used(), which counts a
// replay as a use of those entries and of the variant (one a sweep or the
// LRUs would otherwise find unused) and returns `bytes` as they are then.
function offerReplay (server, req, res, file, { sent, located }) {
  const { onReplayable } = server.options
  const { entry, variant } = file
  if (onReplayable === null || file.variantPending || file.provisional) return
  if (REPLAY_SPOILERS.some((name) => req.headers[name] !== undefined)) return
  // Cache-Control: no-cache fails a condition; the lane hands off every
  // condition sent with Cache-Control, and its key holds none.
  const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined
  if (conditional && req.headers['cache-control'] !== undefined) return
  let range = null
  if (res.statusCode === 304) {
    if (sent !== null) return
  } else {
    const size = entry === null ? file.bytes.length : entry.stat.size
    if (req.headers.range !== undefined) {
      if (res.statusCode !== 206 || variant !== undefined || file.encoding !== null) return
      range = rangeOf(res, size)
      if (range === null) return
    } else if (res.statusCode !== 200) {
      return
    }
    const length = range === null ? size : range.end - range.start + 1
    if (sent === null ? req.method !== 'HEAD' : !sent.complete || sent.bytes !== length) return
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
      bytes: entry === null ? file.bytes : range === null ? memoryBody(entry, false) : null,
      range,
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
        if (variant !== undefined) server.variants.replayed(variant)
        return entry === null ? null : memoryBody(entry, false)
      }
    })
  } finally {
    if (source !== null) cache.release(source)
  }
}

module.exports = { offerReplay }
