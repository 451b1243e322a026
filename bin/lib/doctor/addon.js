'use strict'

// The native addon as lib/engine/binding.js found it: loaded or not, from where, and
// the error that kept it out. Internal to the package (not the public API).
const binding = require('../../../lib/engine')

function describeError (err) {
  if (err === null) return null
  const cause = err.cause instanceof Error ? err.cause.message.trim() : null
  return { code: err.code ?? null, message: err.message, cause: cause === err.message ? null : cause }
}

// The C library a prebuild was built for, from node-gyp-build's file name tag
// (zcopy.glibc.node, zcopy.musl.node); null for a local build.
function libcOf (file) {
  const tag = file && /\.(glibc|musl)\.node$/.exec(file)
  return tag ? tag[1] : null
}

// → { loaded, from: 'prebuild' | 'build' | 'other' | 'none', libc, path, loadError }
function addonStatus () {
  return {
    loaded: binding.zeroCopyAvailable,
    from: binding.binary ? binding.binary.from : 'none',
    libc: libcOf(binding.binary && binding.binary.path),
    path: binding.binary ? binding.binary.path : null,
    loadError: describeError(binding.loadError)
  }
}

module.exports = { addonStatus, probeKernel: binding.probeKernel }
