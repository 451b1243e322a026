'use strict'

const { zeroCopyAvailable } = require('./binding')
const { sendfile } = require('./sendfile')
const { pipeFile } = require('./pipe-file')
const { createReadStream } = require('./read-stream')
const { sendFile, serveStatic } = require('./http')

module.exports = {
  zeroCopyAvailable,
  sendfile,
  pipeFile,
  createReadStream,
  sendFile,
  serveStatic
}
