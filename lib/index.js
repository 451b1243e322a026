'use strict'

const { zeroCopyAvailable } = require('./binding')
const { sendfile } = require('./sendfile')
const { pipeFile } = require('./pipe-file')
const { createReadStream } = require('./read-stream')
const { sendFile, serveStatic } = require('./http')
const { HttpError, isHttpError } = require('./http/http-error')

module.exports = {
  zeroCopyAvailable,
  sendfile,
  pipeFile,
  createReadStream,
  sendFile,
  serveStatic,
  HttpError,
  isHttpError
}
