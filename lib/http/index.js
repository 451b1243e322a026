'use strict'

// The HTTP layer: sendFile for one request, serveStatic as middleware.

const { sendFile } = require('./send-file')
const { serveStatic } = require('./serve-static')

module.exports = { sendFile, serveStatic }
