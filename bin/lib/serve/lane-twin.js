'use strict'

// One request the native lane lends to Node's HTTP server (issue 64): the
// lane parsed it whole (a GET or HEAD, no body) but has no answer for it, and
// keeps its connection. Node's server gets a twin of the connection instead, a
// Duplex that reads the request's bytes and writes what Node answers through
// the lane, which puts it on the connection in order, waits for room (the
// twin's writes call back once the kernel took the bytes: Node's own
// backpressure) and then reads the connection's next request itself.
//
// lendTo(server, lane) → { lend, written, gone }, the lane's onLend,
// onWritten and onGone. One twin per lent request: once Node's answer is done
// the twin is destroyed (Node's server lets go of it as of any closed socket)
// and the lane carries on, or closes the connection when Node ended the twin
// (Connection: close, HTTP/1.0) or destroyed it (an answer cut short).

const { Duplex } = require('node:stream')

class LaneTwin extends Duplex {
  // peer: { address, port, family } of the connection's client.
  constructor (lane, id, bytes, peer) {
    super()
    this.lane = lane
    this.id = id
    // What Node's net.Socket says of its peer (the connection's, not the twin's).
    this.remoteAddress = peer.address
    this.remotePort = peer.port
    this.remoteFamily = peer.family
    this.whenWritten = null // the callback of a write waiting for room
    this.settled = false // the lane was told what becomes of the connection
    this.push(bytes) // and no end: Node would answer `Connection: close`
  }

  _read () {}

  _write (chunk, encoding, callback) {
    const sent = this.lane.write(this.id, chunk)
    if (sent === 0) return callback()
    if (sent === 1) {
      this.whenWritten = callback
      return
    }
    this.settled = true
    callback(Object.assign(new Error('The client closed the connection'), { code: 'EPIPE' }))
  }

  // The lane wrote a write that waited for room.
  written () {
    const callback = this.whenWritten
    this.whenWritten = null
    if (callback !== null) callback()
  }

  // Node ended the twin after its answer: the connection closes once the
  // answer is written.
  _final (callback) {
    if (!this.settled) this.lane.finish(this.id, true)
    this.settled = true
    callback()
  }

  // Node's answer is done and the connection stays open: the lane reads on.
  handBack () {
    if (this.settled) return
    this.settled = true
    this.destroy()
    this.lane.finish(this.id, false)
  }

  // The client went away (the lane closed the connection).
  lost () {
    this.settled = true
    this.destroy()
  }

  // Destroyed by Node before its answer was done: the connection is cut.
  _destroy (err, callback) {
    if (!this.settled) this.lane.cut(this.id)
    this.settled = true
    callback(err)
  }

  // Node's server calls these on its sockets when they exist; the lane's
  // connection has TCP_NODELAY already, and the lane's sweep is its timeout.
  setTimeout () { return this }
  setNoDelay () { return this }
  setKeepAlive () { return this }
}

function lendTo (server, lane) {
  const twins = new Map() // id → the twin of a lent request

  // Node's answer on a twin is done once its response closed (Node's own
  // 'finish' listener has ended the twin then if the connection closes). The
  // lane reads on a turn later, after the access log's line for this answer
  // (written on the turn after 'close'), so lines keep the answers' order.
  server.on('request', (req, res) => {
    const twin = req.socket
    if (!(twin instanceof LaneTwin)) return
    res.once('close', () => setImmediate(() => {
      twins.delete(twin.id)
      if (!res.writableFinished) twin.destroy() // cut short: so is the connection
      else if (!twin.writableEnded) twin.handBack()
    }))
  })

  return {
    lend (id, bytes, address, port, family) {
      const twin = new LaneTwin(lane, id, bytes, { address, port, family })
      twins.set(id, twin)
      twin.once('close', () => twins.delete(id))
      server.emit('connection', twin)
    },
    written (id) {
      twins.get(id)?.written()
    },
    gone (id) {
      twins.get(id)?.lost()
      twins.delete(id)
    }
  }
}

module.exports = { lendTo }
