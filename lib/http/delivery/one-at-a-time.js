'use strict'

// Pipelined HTTP/1.x requests answered one at a time, as nginx answers them: a
// connection reads no further request while a response of zcopy's on it is
// still going out. Node's server stops reading a connection only once its own
// writes to it back up, and a body that goes out by sendfile is not its write:
// a client that pipelines requests and reads nothing had every request it sent
// parsed and half answered, each response queued for its turn (issue 62: 49 MiB
// per connection with a 100-byte file, nginx 60 KiB).
//
// - readingHeldWhile(req, send): send() → Promise (a body sent behind Node's
//   back); the connection reads nothing until it settles.
// - waitForTurn(answer, req, res, next) → true when `req` came while an
//   earlier response on its connection is still going out (Node queued its
//   response: res.socket is null): it is not looked at before that one is
//   done. answer(req, res, next) is called on the turn Node hands its
//   response the socket, and the connection reads nothing until that response
//   closes. The requests of one read (up to 64 KiB of them: Node parses a read
//   whole, a pause stops the next one) then cost their request and response
//   objects alone (~2 KiB each behind node:http), not an answer under way. If the connection
//   closes first, answer is never called: nobody is left to answer.
// - turnOf(req, res): the same as a promise, for sendFile: null when `req`
//   need not wait, else a Promise of true on its turn, false if the
//   connection closes first.
//
// At most MAX_WAITING requests of one connection wait for their turn: the one
// past it closes the connection (RFC 9112 §9.3.2: a client that pipelines
// retries what a closed connection left unanswered). Node has parsed what it
// read whole, so a client that pipelines a read's worth of requests and reads
// nothing would otherwise hold ~1,000 request and response pairs (2–6 KiB each)
// for as long as the send timeout lets it; this way a connection holds at most
// MAX_WAITING of them, and one that asks for more holds nothing.
//
// A connection's reading is held with socket.pause() (public API) while any
// of its holds lasts, and paused again at once if anything resumes it
// meanwhile: Node does when its own backpressure ends (it resumes a socket it
// paused, ours too) and when a request's body is read. Not held: HTTP/2 (a
// session's streams, which its flow control bounds), a request whose own body
// may still be coming (the client may send all of it before it reads), a
// socket already gone.

const net = require('node:net')
const { onClose } = require('../common')

// Requests of one connection that may wait for their turn: deeper than any
// pipelining client asks for (benchmarks pipeline 16), and 32 waiting requests
// hold ~64 KiB behind node:http, nginx's figure for one connection.
const MAX_WAITING = 32

// One connection's holds: its reading is paused while any lasts.
class Connection {
  constructor (socket) {
    this.socket = socket
    this.holds = 0
    this.waiting = 0 // requests waiting for their turn
    this.onResume = () => { if (this.holds > 0) socket.pause() }
    this.release = () => { if (--this.holds === 0) socket.resume() }
    socket.on('resume', this.onResume)
  }

  hold () {
    if (this.holds++ === 0) this.socket.pause()
  }

  // Counts one more request waiting for its turn; false (and the connection
  // closed) when that is one past MAX_WAITING.
  wait () {
    if (this.waiting === MAX_WAITING) {
      this.socket.destroy()
      return false
    }
    this.waiting++
    this.hold()
    return true
  }

  // The turn of a waiting request came (or its connection closed).
  turnCame () {
    this.waiting--
  }
}

const connections = new WeakMap() // socket → its Connection
// A response waiting for its turn → [answer, req, next, the Connection it holds or null].
const turns = new WeakMap()

// The Connection to hold for `req`, or null when its reading is not held.
function connectionToHold (req) {
  const socket = req.socket
  if (req.httpVersionMajor !== 1 || !(socket instanceof net.Socket) || socket.destroyed || bodyMayFollow(req)) return null
  let connection = connections.get(socket)
  if (connection === undefined) {
    connection = new Connection(socket)
    connections.set(socket, connection)
  }
  return connection
}

// Whether `req` may still have body bytes to read from its connection.
function bodyMayFollow (req) {
  if (req.complete) return false
  const { headers } = req
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')
}

function readingHeldWhile (req, send) {
  const connection = connectionToHold(req)
  if (connection === null) return send()
  connection.hold()
  let sending
  try {
    sending = send()
  } catch (err) {
    connection.release()
    throw err
  }
  return sending.finally(connection.release)
}

// Whether `res` waits behind an earlier response on its HTTP/1 connection.
function mustWait (req, res) {
  return res.socket === null && req.httpVersionMajor === 1 && req.socket instanceof net.Socket
}

function waitForTurn (answer, req, res, next) {
  if (!mustWait(req, res)) return false
  if (req.socket.destroyed) return true // nobody left to answer
  const connection = connectionToHold(req)
  if (connection !== null && !connection.wait()) return true // nobody left to answer
  turns.set(res, [answer, req, next, connection])
  res.on('socket', takeTurn)
  return true
}

// The promise form, for sendFile: null when `req` need not wait, or a Promise
// of true on its turn (the connection's reading held until its response
// closes), false if the connection closes first.
function turnOf (req, res) {
  if (!mustWait(req, res)) return null
  if (req.socket.destroyed) return Promise.resolve(false)
  const connection = connectionToHold(req)
  if (connection !== null && !connection.wait()) return Promise.resolve(false)
  return new Promise((resolve) => {
    const gone = () => resolve(false)
    const closing = onClose(req.socket, gone)
    res.once('socket', () => {
      closing.delete(gone)
      if (connection !== null) {
        connection.turnCame()
        res.once('close', connection.release)
      }
      resolve(true) // its callbacks run once Node is done handing the socket over
    })
  })
}

// A waiting response got its socket (`this`: the response): Node hands it over
// from the last response's 'finish', answered once that is done with.
function takeTurn () {
  const [answer, req, next, connection] = turns.get(this)
  turns.delete(this)
  this.off('socket', takeTurn)
  if (connection !== null) {
    connection.turnCame()
    this.once('close', connection.release)
  }
  process.nextTick(answer, req, this, next)
}

module.exports = { readingHeldWhile, turnOf, waitForTurn }
