'use strict'

// The native addon as lib/engine found it: loaded or not, from where, and the
// error that kept it out; its kernel probe; the command that builds it here. Internal to the package (not
// the public API).
const engine = require('../../../lib/engine')

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
    loaded: engine.zeroCopyAvailable,
    from: engine.binary ? engine.binary.from : 'none',
    libc: libcOf(engine.binary && engine.binary.path),
    path: engine.binary ? engine.binary.path : null,
    loadError: describeError(engine.loadError)
  }
}

module.exports = { addonStatus, probeKernel: engine.probeKernel, BUILD_COMMAND: engine.BUILD_COMMAND }
