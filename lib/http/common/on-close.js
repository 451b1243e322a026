'use strict'

// One 'close' listener per emitter (a connection, a server), however many parties
// wait for it: many pipelined responses on one socket, many middlewares on one
// server. More would trip Node's MaxListenersExceededWarning.
//
// onClose(emitter, callback) → the callback's Set, for `.delete(callback)` once
// the caller stops caring. Adding the same callback again is a no-op.

const callbacksOf = new WeakMap()

function onClose (emitter, callback) {
  let callbacks = callbacksOf.get(emitter)
  if (callbacks === undefined) {
    callbacks = new Set()
    callbacksOf.set(emitter, callbacks)
    emitter.once('close', () => {
      callbacksOf.delete(emitter)
      for (const each of callbacks) each()
    })
  }
  callbacks.add(callback)
  return callbacks
}

module.exports = { onClose }
