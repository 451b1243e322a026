'use strict'

// The native lane in front of a node:http server (./native-lane.js): the
// connections' reader, one request at a time, which answers in C what it has
// seen answered before and lends the rest to the server. With what zcopy
// serve needs beside it: whether the addon can run it, and where to listen.

const { laneLoaded, nativeLane } = require('./native-lane')
const { listenAddress } = require('./listen-address')

module.exports = { laneLoaded, listenAddress, nativeLane }
