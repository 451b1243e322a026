'use strict'

// When a response can no longer reach its client. A response's own 'close' is
// not enough: an HTTP/1.1 response queued behind a pipelined one has no socket
// yet, and if the connection goes first it never gets a socket, a write callback
// or a 'close'. The connection's 'close' covers it; on HTTP/2, the stream's.
//
// watchHangup(req, res) → a Hangup: `gone` turns true once, on the first of
// those; `wait(subscribe)` races another event against it; `watch(callback)`
// has it call back then; dispose() detaches.

const { onClose } = require('../common')

class Hangup {
  constructor (req, res) {
    this.gone = false
    this.waiter = null
    this.watcher = null
    this.res = res
    this.onClose = () => this.hangUp()
    // HTTP/2: the compat response closes with its stream; its socket is shared.
    this.stream = req.httpVersionMajor === 2 ? res.stream : null
    this.socket = this.stream === null ? req.socket : null
    this.hangups = null
    res.once('close', this.onClose)
    if (this.stream !== null) {
      this.stream.once('close', this.onClose)
      if (this.stream.destroyed || this.stream.closed) this.gone = true
    } else if (this.socket) {
      this.hangups = onClose(this.socket, this.onClose)
      if (this.socket.destroyed) this.gone = true
    }
    if (res.destroyed) this.gone = true
  }

  hangUp () {
    if (this.gone) return
    this.gone = true
    this.resume(false)
    if (this.watcher !== null) this.watcher()
  }

  // Calls `callback` once, when the client goes (not when it is gone already).
  watch (callback) {
    this.watcher = callback
  }

  resume (value) {
    const waiter = this.waiter
    this.waiter = null
    if (waiter !== null) waiter(value)
  }

  // → Promise<boolean>: true once `subscribe(done)` calls done(), false if the
  // client goes first (or is gone already). One wait at a time.
  wait (subscribe) {
    if (this.gone) return Promise.resolve(false)
    return new Promise((resolve) => {
      this.waiter = resolve
      subscribe(() => { if (this.waiter === resolve) this.resume(true) })
    })
  }

  dispose () {
    this.waiter = null
    this.watcher = null
    this.res.off('close', this.onClose)
    if (this.stream !== null) this.stream.off('close', this.onClose)
    if (this.hangups !== null) this.hangups.delete(this.onClose)
  }
}

function watchHangup (req, res) {
  return new Hangup(req, res)
}

module.exports = { watchHangup }
