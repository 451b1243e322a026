'use strict'

// The package's public API: the engine's and the HTTP layer's, each through its
// own index (lib/engine/, lib/http/); docs/internals.md has the module map.

const { zeroCopyAvailable, loadError, sendfile, pipeFile, createReadStream } = require('./engine')
const { sendFile, serveStatic, protectServer, HttpError, isHttpError } = require('./http')

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
