'use strict'

// zcopy.sendFile(req, res, path, options) → Promise<void>
// Answers one GET or HEAD request with one file on a node:http ServerResponse (or
// an http2 compat response). `path` is a filesystem path: absolute, or relative to
// `options.root`, which it then cannot leave. Bad arguments throw (TypeError with
// a code). It rejects, when nothing was sent,
// with the error send would give (see ./http-error: http-errors' NotFoundError,
// ForbiddenError…, or the file-system error with status/statusCode/expose added):
// 400/403/404 (bad path, refused, not found), 412 (precondition), 416 (range;
// `headers` has Content-Range), 500; the caller answers.

const path = require('node:path')
const { invalidArgType, invalidArgValue } = require('../../engine')
const { httpError, onClose, promiseOf } = require('../common')
const { DIRECTORY, locateFile, resolvePath } = require('../target')
const { normalizeOptions } = require('./options')
const { SharedStacks } = require('./stack')
const { turnOf } = require('../delivery')
const { FileServer } = require('./serve-file')

// What every sendFile call shares: one open-file cache, and a variant store
// per set of compress settings (./stack.js). Callers often pass a fresh
// options object each call: those with the same settings share them.
const stacks = new SharedStacks()
const normalized = new WeakMap() // caller's options object → normalized options
const servers = new WeakMap() // normalized options → their FileServer
const defaults = normalizeOptions()
const closeStores = () => stacks.close()

function optionsOf (options) {
  if (options === undefined || options === null) return defaults
  let value = normalized.get(options)
  if (value === undefined) {
    value = normalizeOptions(options)
    normalized.set(options, value)
  }
  return value
}

function serverFor (opts) {
  let server = servers.get(opts)
  if (server === undefined) {
    server = new FileServer(opts, stacks.stackFor(opts))
    servers.set(opts, server)
  }
  return server
}

// Bad arguments throw at once (TypeError with a code, as pipeFile's and Express's
// res.sendFile's do); everything about the file rejects.
function sendFile (req, res, file, options) {
  if (typeof file !== 'string') throw invalidArgType('path', 'of type string', file)
  const opts = optionsOf(options)
  if (opts.root === null && !path.isAbsolute(file)) {
    throw invalidArgValue('path', file, 'must be absolute or options.root must be set')
  }
  if (opts.compress) {
    const server = req.socket && req.socket.server
    if (server) onClose(server, closeStores)
  }
  const files = serverFor(opts)
  // Pipelined behind a response still going out: sent after it, or not at all
  // if the connection goes first (one-at-a-time.js).
  const turn = turnOf(req, res)
  if (turn === null) return send(req, res, file, opts, files)
  return turn.then((mine) => mine ? send(req, res, file, opts, files) : undefined)
}

function send (req, res, file, opts, files) {
  return promiseOf(() => locateFile(resolvePath(files.root, file, opts.dotfiles), opts, files.lookUp)).then((located) => {
    if (located === DIRECTORY) throw httpError(404)
    return files.serve(req, res, located)
  })
}

module.exports = { sendFile }
