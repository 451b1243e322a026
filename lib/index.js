'use strict'

// The package's public API: the engine's, the HTTP layer's and the native
// lane's, each through its own index (lib/engine/, lib/http/, lib/lane/);
// docs/internals.md has the module map.

const { zeroCopyAvailable, loadError, sendfile, pipeFile, createReadStream } = require('./engine')
const { sendFile, serveStatic, protectServer, HttpError, isHttpError } = require('./http')
const { nativeLane } = require('./lane')

module.exports = {
  zeroCopyAvailable,
  loadError,
  sendfile,
  pipeFile,
  createReadStream,
  sendFile,
  serveStatic,
  protectServer,
  nativeLane,
  HttpError,
  isHttpError
}
