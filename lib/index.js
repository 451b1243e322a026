'use strict'

const { zeroCopyAvailable, loadError } = require('./engine/binding')
const { sendfile } = require('./engine/sendfile')
const { pipeFile } = require('./engine/pipe-file')
const { createReadStream } = require('./engine/read-stream')
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
