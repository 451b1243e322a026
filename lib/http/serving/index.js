'use strict'

// The HTTP layer's entry points: serveStatic (middleware), sendFile (one
// request), and the handler the adapters share without serveStatic's
// middleware shape. They use every folder of lib/http; none uses them.

const { sendFile } = require('./send-file')
const { createStaticHandler, serveStatic } = require('./serve-static')

module.exports = { createStaticHandler, sendFile, serveStatic }
