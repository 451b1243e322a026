'use strict'

// nginx's send_timeout for HTTP/2 sessions, counted in bytes sent, not frames
// received. Node's own session timeout (server.setTimeout, protectServer) is
// re-armed by any HEADERS, SETTINGS, PING or PRIORITY frame a client sends: a
// client whose streams never open their window (SETTINGS_INITIAL_WINDOW_SIZE
// 0) keeps every body it asked for in memory for as long as it sends such a
// frame now and then. Here a session with a response body waiting to go (a
// stream's http2stream.bufferSize above 0) is destroyed when its connection
// took less than PROGRESS_BYTES in `timeoutMs`, as an HTTP/1.1 connection
// whose client reads nothing is.
//
// The bytes are the connection's (session.socket.bytesWritten): no public
// counter says what one stream sent (its bufferSize stays the same while a
// body moves at a steady pace, each piece written as the last one goes, and
// does not move at all while a body sent in one write, a small file from the
// memory cache, goes out). The answers to a client's PINGs and SETTINGS are
// taken off, counted as if each went in a TLS record of its own (the most it
// can cost), so that a client cannot make the progress up with them. A
// session is looked at every `timeoutMs / 4` (at most every second): one is
// cut between `timeoutMs` and `timeoutMs` plus that period after its last
// progress.

// One piece of a body (lib/engine/copy/pieces.js): what a body that moves sends at
// least, at a time.
const PROGRESS_BYTES = 16 * 1024
// A TLS 1.3 record's own bytes (header, content type, AEAD tag) and the
// answers to a PING (a PING frame back: 9 + 8 bytes) and to a SETTINGS frame
// (an empty SETTINGS with ACK: 9 bytes).
const RECORD_BYTES = 5 + 1 + 16
const PING_ANSWER_BYTES = RECORD_BYTES + 17
const SETTINGS_ANSWER_BYTES = RECORD_BYTES + 9
const MAX_CHECK_MS = 1000

// Call on a fresh node:http2 server: → nothing. `timeoutMs` > 0.
// What runs per stream is a Set's add and delete and one shared 'close'
// listener; the session's check runs from its first stream to its close.
function closeStalledSessions (server, timeoutMs) {
  const checkMs = Math.min(MAX_CHECK_MS, Math.max(1, Math.floor(timeoutMs / 4)))
  server.on('session', (session) => {
    const streams = new Set() // open streams
    let timer = null
    let sentAt = 0 // the connection's bytes written at its last progress
    let since = 0 // when that was
    let answers = 0 // bytes of answers to PINGs and SETTINGS since then, at most
    const waiting = () => {
      for (const stream of streams) {
        if (stream.bufferSize > 0) return true
      }
      return false
    }
    const check = () => {
      if (session.destroyed) return
      const sent = session.socket.bytesWritten
      const now = Date.now()
      if (sent - sentAt - answers >= PROGRESS_BYTES || !waiting()) {
        sentAt = sent
        since = now
        answers = 0
      } else if (now - since >= timeoutMs) {
        session.destroy()
      }
    }
    function forget () { streams.delete(this) }
    session.on('ping', () => { answers += PING_ANSWER_BYTES })
    session.on('remoteSettings', () => { answers += SETTINGS_ANSWER_BYTES })
    session.on('stream', (stream) => {
      if (streams.size === 0) {
        // Nothing was waiting: the time without progress starts now.
        sentAt = session.socket.bytesWritten
        since = Date.now()
        answers = 0
      }
      streams.add(stream)
      stream.on('close', forget)
      if (timer === null) {
        timer = setInterval(check, checkMs)
        timer.unref()
      }
    })
    session.once('close', () => {
      clearInterval(timer)
      streams.clear()
    })
  })
}

module.exports = { closeStalledSessions }
