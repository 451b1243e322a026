'use strict'

// One request the native lane lends to Node's HTTP server (issue 64): the
// lane read its head (any method of Node's but CONNECT) and has no answer
// for it, and keeps its connection. Node's server gets a twin of the
// connection instead, a Duplex that reads the request's bytes (its body as
// the lane reads it, which stops while the twin is full) and writes what
// Node answers through the lane, which puts it on the connection in order,
// waits for room (the twin's writes call back once the kernel took the
// bytes: Node's own backpressure) and then reads the connection's next
// request itself. A file body goes by the lane's sendfile (the engine's
// SEND_FILE protocol), not through the twin's writes; when the connection
// cannot take it at once, the lane sends the rest alone and Node's answer
// ends now, so that a client that reads nothing holds no request of Node's
// (issue 62: what a replay holds, a few KiB of the lane's), and `later`
// says how the range ended.
//
// lendTo(server, lane) → { lend, body, written, gone, lent }: the lane's
// onLend, onBody, onWritten and onGone, and how many requests are lent now.
// One twin per lent request: once Node's answer is done the twin is
// destroyed (Node's server lets go of it as of any closed socket) and the
// lane carries on, or closes the connection when Node ended the twin
// (Connection: close, HTTP/1.0) or destroyed it (an answer cut short).

const { Duplex } = require('node:stream')
const { SEND_FILE, clientClosedError } = require('../engine')
const { OwedRanges } = require('./owed-ranges')

class LaneTwin extends Duplex {
  // ends: { remoteAddress, remotePort, remoteFamily, localAddress,
  // localPort, localFamily } of the connection (src/lane.cc, CallLent).
  // owed: the file ranges the lane sends alone (lendTo's).
  constructor (lane, id, bytes, ends, owed) {
    super()
    this.lane = lane
    this.id = id
    this.owed = owed
    // What Node's net.Socket says of its ends (the connection's, not the twin's).
    this.remoteAddress = ends.remoteAddress
    this.remotePort = ends.remotePort
    this.remoteFamily = ends.remoteFamily
    this.localAddress = ends.localAddress
    this.localPort = ends.localPort
    this.localFamily = ends.localFamily
    this.bodyHeld = false // the lane stopped reading the request's body: this twin is full
    this.whenWritten = null // the callback of a write waiting for room
    this.settled = false // the lane was told what becomes of the connection
    this.push(bytes) // and no end: Node would answer `Connection: close`
  }

  // Node's parser takes more: the lane reads the request's body again.
  _read () {
    if (!this.bodyHeld) return
    this.bodyHeld = false
    this.lane.readBody(this.id, true)
  }

  // Bytes of the request's body, as the lane reads them; once the twin holds
  // as much as it takes (Node's parser paused), the lane stops reading it.
  body (bytes) {
    if (this.destroyed || this.push(bytes)) return
    this.bodyHeld = true
    this.lane.readBody(this.id, false)
  }

  _write (chunk, encoding, callback) {
    const sent = this.lane.write(this.id, chunk)
    if (sent === 0) return callback()
    if (sent === 1) {
      this.whenWritten = callback
      return
    }
    this.settled = true
    callback(clientClosedError())
  }

  // A file's range as the answer's body, by the lane's sendfile on the
  // connection behind the bytes written before (the engine's protocol for a
  // destination with no descriptor of its own). → a Promise of { bytes,
  // complete }: at once, whether the kernel took it all or the lane sends
  // the rest alone, with `later` then, a Promise of { bytes, complete,
  // truncated } once the range went or the connection closed.
  [SEND_FILE] (fd, start, length) {
    const sent = this.destroyed ? -1 : this.lane.sendFile(this.id, fd, start, length)
    if (sent === 0) return Promise.resolve({ bytes: length, complete: true })
    if (sent === 1) return Promise.resolve({ bytes: length, complete: true, later: this.owed.add(this.id, length) })
    return Promise.resolve({ bytes: 0, complete: false })
  }

  // The lane wrote what waited for room.
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

  // The lane closed the connection (the client went away).
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

  // As net.Socket's address(): the connection's end here.
  address () {
    return { address: this.localAddress, family: this.localFamily, port: this.localPort }
  }

  // Node's server and apps call these on their sockets; the lane owns what
  // they set: its connections have TCP_NODELAY already, and its sweep (the
  // server's timeout) is their timeout.
  setTimeout () { return this }
  setNoDelay () { return this }
  setKeepAlive () { return this }
}

function lendTo (server, lane) {
  const twins = new Map() // id → the twin of a lent request
  const owed = new OwedRanges()

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
    lend (id, bytes, ends) {
      const twin = new LaneTwin(lane, id, bytes, ends, owed)
      twins.set(id, twin)
      twin.once('close', () => twins.delete(id))
      server.emit('connection', twin)
    },
    body (id, bytes) {
      twins.get(id)?.body(bytes)
    },
    written (id) {
      twins.get(id)?.written()
      owed.written(id)
    },
    gone (id, fileBytes, fileShort) {
      twins.get(id)?.lost()
      twins.delete(id)
      owed.cut(id, fileBytes, fileShort)
    },
    lent () {
      return twins.size
    }
  }
}

module.exports = { lendTo }
