'use strict'

// A body onto a response: by sendfile from a descriptor where the destination
// is a plain socket, else by the engine's copy (TLS, HTTP/2, a framework's
// stream); a body from memory; a client hanging up meanwhile; and pipelined
// HTTP/1.1 requests answered one at a time.

const { FileBody, bytesBody } = require('./file-body')
const { markFronted } = require('./fronted')
const { turnOf, waitForTurn } = require('./one-at-a-time')
const { copiesBody, sendBody, sendBytes } = require('./send-body')

module.exports = { FileBody, bytesBody, copiesBody, markFronted, sendBody, sendBytes, turnOf, waitForTurn }
