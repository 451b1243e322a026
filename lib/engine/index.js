'use strict'

// The transfer engine: moves a byte range of a file to a socket, stream or file,
// by sendfile(2) in the addon when it can and by streams when it cannot. It
// knows sockets, descriptors and streams, never HTTP. This file is the only way
// in for the layers above (lib/index.js, lib/http/, bin/).

const { loadError, binary, zeroCopyAvailable, BUILD_COMMAND } = require('./binding')
const addonCalls = require('./addon-calls')
const { sendfile } = require('./sendfile')
const { pipeFile, sendRange } = require('./pipe-file')
const { createReadStream } = require('./read-stream')
const { copy, PIECE_SIZE, Stop } = require('./copy')
const { readAt, readAtSync, readRange } = require('./read-range')
const { SEND_FILE, movesByZeroCopy, sendsFiles, socketFd, transportFd } = require('./destination')
const { clientClosedError, invalidArgType, invalidArgValue, truncatedError } = require('./errors')
const { validateInteger, validateObject } = require('./validate')

module.exports = {
  // the package's public API (lib/index.js)
  zeroCopyAvailable,
  loadError,
  sendfile,
  pipeFile,
  createReadStream,
  // for lib/http: whether a response's body goes by sendfile (given what its
  // destination allows) or is copied, a range to a response's socket, and
  // what it checks first
  movesByZeroCopy,
  sendRange,
  // for lib/http and bin/: the protocol of a destination that sends a file's
  // bytes onto its connection itself (a native server's lent connection),
  // and the error it gives when the client is gone, as a socket's write would
  SEND_FILE,
  sendsFiles,
  clientClosedError,
  // for lib/http: a body copied through user space into a response, paced for
  // a client that stops reading, what ends it early (a response's hangup is
  // one), and the size of the pieces it moves in
  copy,
  Stop,
  PIECE_SIZE,
  // for lib/http: a range of a descriptor read in pieces, the one fs.read loop
  // (a file body for a framework, content ETags, bodies kept in memory, the
  // compression's sources)
  readAt,
  readAtSync,
  readRange,
  socketFd,
  transportFd,
  // the addon's calls by name, each null where it is not there (./addon-calls)
  ...addonCalls,
  // for zcopy doctor: the binary loaded (or refused), from where, and the
  // command that builds one from source
  binary,
  BUILD_COMMAND,
  // Node-shaped argument errors and checks, shared with lib/http
  invalidArgType,
  invalidArgValue,
  truncatedError,
  validateInteger,
  validateObject
}
