'use strict'

// protectServer: what a Node HTTP server needs against clients that stall or
// pipeline (./protect-server.js), with the refusal of bytes its parser
// refuses behind pipelined requests once those are answered.

const { protectServer } = require('./protect-server')

module.exports = { protectServer }
