'use strict'

// The HTTP layer: sendFile for one request, serveStatic as middleware. This file
// is the only way in for the layers above (lib/index.js, lib/adapters/, bin/).

const { createStaticHandler, sendFile, serveStatic } = require('./serving')
const { protectServer } = require('./protect')
const { badOption, HttpError, isHttpError } = require('./common')
const { bytesBody, FileBody, markFronted } = require('./delivery')
const { DIRECTORY, locateFile, resolvePath, spellingBelow, splitUrl } = require('./target')
const { acceptedCodings, codingNames, suffixOf } = require('./representation')
const { AVAILABLE: COMPRESSION_ENCODINGS, brotliParams, defaultCacheDir } = require('./compress')
const { defaultMaxOpenFiles } = require('./files')

module.exports = {
  // the package's public API (lib/index.js)
  sendFile,
  serveStatic,
  protectServer,
  HttpError,
  isHttpError,
  // for the Koa and Fastify adapters: the handler without its middleware
  // shape, the one style of a bad option's error, the bodies they hand their
  // framework, @fastify/static's lookups
  createStaticHandler,
  badOption,
  FileBody,
  bytesBody,
  DIRECTORY,
  locateFile,
  resolvePath,
  spellingBelow,
  // for @fastify/static's precompressed siblings: the table of codings and
  // the one Accept-Encoding negotiation
  acceptedCodings,
  codingNames,
  suffixOf,
  // for zcopy serve: the request-target as serveStatic reads it, and what
  // compress: true does (the encodings this Node has, where results are kept),
  // and the open-file cache's share of the descriptors (the native lane's
  // rows take no more)
  splitUrl,
  COMPRESSION_ENCODINGS,
  defaultCacheDir,
  defaultMaxOpenFiles,
  // for the native lane (lib/lane), which owns a server's listening socket
  markFronted,
  // for bench/http/compress-cost.js: the brotli settings compress: true uses
  brotliParams
}
