'use strict'

// The plugin's options checked at registration, as @fastify/static checks them:
// a bad one throws, so fastify.ready() rejects.

const fs = require('node:fs')
const path = require('node:path')
const { fileURLToPath } = require('node:url')
const { FST_STATIC_INVALID_OPTION, FST_STATIC_INVALID_OPTION_VALUE } = require('./errors')

function fromFileUrl (root) {
  return root instanceof URL && root.protocol === 'file:' ? fileURLToPath(root) : root
}

// A root: a path or file: URL, or an array of them → the same as paths.
function normalizeRoot (root) {
  return Array.isArray(root) ? root.map(fromFileUrl) : fromFileUrl(root)
}

function checkRootPath (fastify, root, suppressWarning) {
  if (typeof root !== 'string') throw new FST_STATIC_INVALID_OPTION_VALUE('root', 'must be a string')
  if (!path.isAbsolute(root)) throw new FST_STATIC_INVALID_OPTION('root', 'must be an absolute path')
  let stat
  try {
    stat = fs.statSync(root)
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
    if (!suppressWarning) fastify.log.warn(`"root" path "${root}" must exist`)
    return
  }
  if (!stat.isDirectory()) throw new FST_STATIC_INVALID_OPTION('root', 'must be a directory')
}

// Throws unless `root` is an absolute directory path or a non-empty array of
// distinct ones (a missing directory is only a warning, as in @fastify/static).
function checkRoot (fastify, root, suppressWarning) {
  if (root === undefined) throw new FST_STATIC_INVALID_OPTION('root', 'is required')
  if (Array.isArray(root)) {
    if (root.length === 0) throw new FST_STATIC_INVALID_OPTION('root', 'array requires one or more paths')
    if (new Set(root).size !== root.length) throw new FST_STATIC_INVALID_OPTION('root', 'array contains duplicate paths')
    for (const one of root) checkRootPath(fastify, one, suppressWarning)
    return
  }
  if (typeof root !== 'string') throw new FST_STATIC_INVALID_OPTION_VALUE('root', 'must be a string or array of strings')
  checkRootPath(fastify, root, suppressWarning)
}

module.exports = { checkRoot, normalizeRoot }
