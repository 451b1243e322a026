'use strict'

// Graceful stop: the listener closes at once (new connections are refused),
// idle keep-alive connections are closed, and the responses in flight get up
// to `timeoutMs` to finish, each connection closed as soon as it has nothing
// in flight; then whatever is left is cut. HTTP/2 sessions are sent GOAWAY
// and closed once their streams are done.

const tls = require('node:tls')

const POLL_MS = 50

// Call on a fresh server, before it listens: → drain(timeoutMs) → Promise.
function trackConnections (server) {
  const sockets = new Set() // every TLS or TCP socket of HTTP/1
  const sessions = new Set() // HTTP/2
  const inFlight = new Map() // HTTP/1 socket → responses not finished
  let draining = false

  const socketEvent = server instanceof tls.Server ? 'secureConnection' : 'connection'
  server.on(socketEvent, (socket) => {
    if (socket.alpnProtocol === 'h2') return
    sockets.add(socket)
    socket.once('close', () => {
      sockets.delete(socket)
      inFlight.delete(socket)
    })
  })
  server.on('session', (session) => {
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
    if (draining) session.close()
  })
  server.on('request', (req, res) => {
    if (req.httpVersionMajor !== 1) return
    const socket = req.socket
    inFlight.set(socket, (inFlight.get(socket) || 0) + 1)
    if (draining) res.setHeader('Connection', 'close')
    // A client that goes mid-response closes its socket first (the entry is
    // gone then): an entry at 0 is deleted, not kept, or it would hold the
    // closed socket, and all it references, for the life of the process.
    res.once('close', () => {
      const count = (inFlight.get(socket) ?? 1) - 1
      if (count > 0) inFlight.set(socket, count)
      else inFlight.delete(socket)
      if (draining) closeIdle()
    })
  })

  function closeIdle () {
    for (const socket of sockets) {
      if (!inFlight.get(socket)) socket.destroy()
    }
  }

  function idle () {
    return sockets.size === 0 && sessions.size === 0
  }

  function drain (timeoutMs) {
    draining = true
    return new Promise((resolve) => {
      server.close()
      for (const session of sessions) session.close()
      closeIdle()
      const started = Date.now()
      const timer = setInterval(() => {
        closeIdle()
        if (idle() || Date.now() - started >= timeoutMs) {
          clearInterval(timer)
          for (const socket of sockets) socket.destroy()
          for (const session of sessions) session.destroy()
          resolve()
        }
      }, POLL_MS)
    })
  }

  // What a drain waits for: responses in flight (HTTP/1) and HTTP/2 sessions.
  drain.waitingFor = () => {
    let responses = 0
    for (const count of inFlight.values()) responses += count
    return { responses, sessions: sessions.size }
  }

  return drain
}

// → the stop line: what the drain waits for, up to when; or just 'stopping'.
function stoppingLine ({ responses, sessions }, timeoutSeconds) {
  const parts = []
  if (responses > 0) parts.push(`${responses} response${responses > 1 ? 's' : ''} in flight`)
  if (sessions > 0) parts.push(`${sessions} HTTP/2 session${sessions > 1 ? 's' : ''}`)
  if (parts.length === 0) return 'zcopy: stopping'
  return `zcopy: stopping; waiting up to ${timeoutSeconds} s for ${parts.join(' and ')} (Ctrl-C again to cut them)`
}

module.exports = { stoppingLine, trackConnections }
