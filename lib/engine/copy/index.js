'use strict'

// The copy through user space, the one loop that moves bytes where sendfile
// does not (range-copy.js): for lib/http's bodies (copy), for pipeFile's and
// sendRange's streams (streamCopy, flushed), and the size of the pieces it
// reads a Flight's copies in; Stop, what ends a copy early.

const { copy } = require('./range-copy')
const { PIECE_SIZE } = require('./pieces')
const { flushed, streamCopy } = require('./stream-copy')
const { Stop } = require('./stop')

module.exports = { copy, flushed, streamCopy, PIECE_SIZE, Stop }
