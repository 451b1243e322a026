'use strict'

// nginx's send_timeout for HTTP/2 streams, counted in bytes moved, not frames
// received. Node's own timeouts (server.setTimeout: per session) are re-armed
// by any HEADERS, SETTINGS, PING or PRIORITY frame a client sends, and a
// stream's by any chunk its session writes (a PING's answer too): a client
// whose streams never open their window (SETTINGS_INITIAL_WINDOW_SIZE 0) keeps
// every body it asked for in memory for as long as it sends a frame now and
// then. Here a stream whose response has bytes waiting to go is stalled when,
// for `timeoutMs`, none of its writes was taken by the connection: its
// http2stream.bufferSize did not change and it emitted no 'drain' (a body
// that moves at a steady pace writes its next piece as the last one goes,
// which leaves bufferSize where it was; its writes fill the stream's buffer,
// so each time they have all gone it drains). A piece is at most 16 KiB: a
// body must move that much per `timeoutMs` (273 B/s for 60 s). A stalled
// stream is reset (RST_STREAM CANCEL), and a session whose open streams are
// all stalled is destroyed, as an HTTP/1.1 connection whose client reads
// nothing is. Streams are looked at every `timeoutMs / 4` (at most every
// second): one is cut between `timeoutMs` and `timeoutMs` plus that period
// after its last progress.

const http2 = require('node:http2')

const MAX_CHECK_MS = 1000

// Call on a fresh node:http2 server: → nothing. `timeoutMs` > 0.
function closeStalledStreams (server, timeoutMs) {
  const checkMs = Math.min(MAX_CHECK_MS, Math.max(1, Math.floor(timeoutMs / 4)))
  server.on('session', (session) => {
    const streams = new Map() // open stream → { size, since, drained }: its bufferSize, when it last moved, a 'drain' since
    let timer = null
    const check = () => {
      const now = Date.now()
      let stalled = 0
      for (const [stream, seen] of streams) {
        const size = stream.bufferSize
        if (size !== seen.size || size === 0 || seen.drained) {
          seen.size = size
          seen.since = now
          seen.drained = false
        } else if (now - seen.since >= timeoutMs) {
          stalled++
        }
      }
      if (stalled > 0 && stalled === streams.size) return session.destroy()
      if (stalled > 0) {
        for (const [stream, seen] of streams) {
          if (seen.size !== 0 && now - seen.since >= timeoutMs) stream.close(http2.constants.NGHTTP2_CANCEL)
        }
      }
    }
    session.on('stream', (stream) => {
      const seen = { size: 0, since: Date.now(), drained: false }
      streams.set(stream, seen)
      stream.on('drain', () => { seen.drained = true })
      if (timer === null) {
        timer = setInterval(check, checkMs)
        timer.unref()
      }
      stream.once('close', () => {
        streams.delete(stream)
        if (streams.size === 0 && timer !== null) {
          clearInterval(timer)
          timer = null
        }
      })
    })
  })
}

module.exports = { closeStalledStreams }
