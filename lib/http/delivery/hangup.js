'use strict'

// When a response can no longer reach its client. A response's own 'close' is
// not enough: an HTTP/1.1 response queued behind a pipelined one has no socket
// yet, and if the connection goes first it never gets a socket, a write callback
// or a 'close'. The connection's 'close' covers it; on HTTP/2, the stream's.
//
// watchHangup(req, res) → a Hangup, the engine's Stop for a response's body
// (a copy ends on it): `stopped` turns true once, on the first of those;
// `watch(callback)` has it call back then; `wait(subscribe)` races another
// event against it; dispose() detaches.

const { onClose } = require('../common')
const { Stop } = require('../../engine')

class Hangup extends Stop {
  constructor (req, res) {
    super()
    this.waiter = null
    this.res = res
    this.onClose = () => this.hangUp()
    // HTTP/2: the compat response closes with its stream; its socket is shared.
    this.stream = req.httpVersionMajor === 2 ? res.stream : null
    this.socket = this.stream === null ? req.socket : null
    this.hangups = null
    res.once('close', this.onClose)
    if (this.stream !== null) {
      this.stream.once('close', this.onClose)
      if (this.stream.destroyed || this.stream.closed) this.stop()
    } else if (this.socket) {
      this.hangups = onClose(this.socket, this.onClose)
      if (this.socket.destroyed) this.stop()
    }
    if (res.destroyed) this.stop()
  }

  hangUp () {
    if (this.stopped) return
    this.resume(false)
    this.stop()
  }

  resume (value) {
    const waiter = this.waiter
    this.waiter = null
    if (waiter !== null) waiter(value)
  }

  // → Promise<boolean>: true once `subscribe(done)` calls done(), false if the
  // client goes first (or is gone already). One wait at a time.
  wait (subscribe) {
    if (this.stopped) return Promise.resolve(false)
    return new Promise((resolve) => {
      this.waiter = resolve
      subscribe(() => { if (this.waiter === resolve) this.resume(true) })
    })
  }

  dispose () {
    this.waiter = null
    this.watch(null)
    this.res.off('close', this.onClose)
    if (this.stream !== null) this.stream.off('close', this.onClose)
    if (this.hangups !== null) this.hangups.delete(this.onClose)
  }
}

function watchHangup (req, res) {
  return new Hangup(req, res)
}

module.exports = { watchHangup }
