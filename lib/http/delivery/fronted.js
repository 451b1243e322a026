'use strict'

// Servers whose listening socket is another's (zcopy.nativeLane owns it):
// their `listening` is false all the while they serve, so it says nothing of
// whether they are closing (send-body.js's releaseIfClosing asks); the one
// in front closes their connections itself when it closes.

const fronted = new WeakSet()

function markFronted (server) {
  fronted.add(server)
}

function isFronted (server) {
  return fronted.has(server)
}

module.exports = { isFronted, markFronted }
