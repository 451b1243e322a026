'use strict'

// The zcopy handlers of one zcopy/fastify instance: one per root and per-call
// options. The plugin's own roots keep theirs until the instance closes; those
// made for reply.sendFile's per-call roots and options are bounded, least
// recently used closed first (a closed handler lets its transfers in flight
// finish).

const path = require('node:path')
const { createStaticHandler } = require('../../http')
const { FASTIFY_DELIVERY, replySetHeaders } = require('./reply')

// The options a sendFile call may override (@fastify/send's per-call options),
// and all those the zcopy handlers take from the plugin's.
const CALL_OPTIONS = ['acceptRanges', 'cacheControl', 'dotfiles', 'etag', 'extensions', 'immutable', 'index',
  'lastModified', 'maxAge']
const HANDLER_OPTIONS = [...CALL_OPTIONS, 'contentType', 'maxOpenFiles', 'memoryCache', 'maxWatches', 'compress',
  'allowSymlinksOutsideRoot', 'onSent']

// Handlers kept for sendFile's per-call roots and options (see handlerFor).
const MAX_CALL_HANDLERS = 32

function pick (from, names) {
  const picked = {}
  for (const name of names) if (from[name] !== undefined) picked[name] = from[name]
  return picked
}

class HandlerPool {
  // `opts`: the plugin's checked options.
  constructor (opts) {
    this.baseOptions = { ...pick(opts, HANDLER_OPTIONS), setHeaders: replySetHeaders(opts.setHeaders) }
    this.handlers = new Map() // key → handler, least recently used first
    this.pinned = new Set([].concat(opts.root).filter((root) => typeof root === 'string').map((root) => path.resolve(root)))
  }

  // The handler for `root` (null: '/') with `callOptions` (a sendFile call's).
  handlerFor (root, callOptions) {
    const { handlers, pinned } = this
    const dir = root === null ? '/' : path.resolve(root)
    const own = pick(callOptions || {}, CALL_OPTIONS) // plain values: JSON is their key
    const key = Object.keys(own).length === 0 ? dir : dir + '\0' + JSON.stringify(own)
    let handler = handlers.get(key)
    if (handler === undefined) handler = createStaticHandler(dir, { ...this.baseOptions, ...own, redirect: false }, { exactSpelling: true, delivery: FASTIFY_DELIVERY })
    handlers.delete(key) // re-inserted last: the Map's order is the LRU order
    handlers.set(key, handler)
    if (handlers.size > pinned.size + MAX_CALL_HANDLERS) {
      for (const [oldKey, old] of handlers) {
        if (pinned.has(oldKey)) continue
        handlers.delete(oldKey)
        old.close()
        break
      }
    }
    return handler
  }

  close () {
    return Promise.all([...this.handlers.values()].map((handler) => handler.close())).then(() => {})
  }
}

module.exports = { HandlerPool, pick }
