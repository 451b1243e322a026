'use strict'

const { zeroCopyAvailable, loadError } = require('./binding')
const { sendfile } = require('./sendfile')
const { pipeFile } = require('./pipe-file')
const { createReadStream } = require('./read-stream')
const { sendFile, serveStatic } = require('./http')
const { HttpError, isHttpError } = require('./http/http-error')
const { protectServer } = require('./http/protect-server')

module.exports = {
  zeroCopyAvailable,
  loadError,
  sendfile,
  pipeFile,
  createReadStream,
  sendFile,
  serveStatic,
  protectServer,
  HttpError,
  isHttpError
}
