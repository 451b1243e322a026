'use strict'

// Loads the native addon (a prebuild from prebuilds/ or a local build/) through
// node-gyp-build. When it is not loaded, zero-copy is unavailable, the pure-JS
// fallback takes over, and `loadError` says why, with a `code`:
//
//   ZCOPY_UNSUPPORTED_PLATFORM  not Linux: zero-copy is Linux-only, nothing is loaded
//   ZCOPY_UNSUPPORTED_RUNTIME   Bun: it loads Node-API addons but not the libuv
//                               functions this one calls (the thread pool, uv_poll,
//                               uv_fs_fstat); Bun aborts the process on the first
//                               call, so the addon is not loaded there
//   ZCOPY_NATIVE_DISABLED       ZCOPY_NATIVE=0 asks for the fallback
//   ZCOPY_NATIVE_NOT_FOUND      no prebuild for this platform and no build/ (nobody
//                               ran `zcopy build`, or the build failed)
//   ERR_DLOPEN_FAILED           a binary was found but the dynamic loader refused
//                               it (built for another ABI or libc; Node's error is
//                               the cause)
//   ZCOPY_NATIVE_LOAD_FAILED    anything else that went wrong while loading it
//
// These last three messages end with the command that builds the addon here
// (`BUILD_COMMAND`, which zcopy doctor prints too): the package has no install
// script, so a system no prebuild serves gets zero-copy only by running it.
//
// `binary` is { path, from } for the file node-gyp-build picked (`from`:
// 'prebuild', 'build' or 'other', e.g. ZCOPY_PREBUILD), also when loading it
// failed; null when no file was picked.

const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

// The command that builds the addon from source (into build/Release of the
// package installed in the project it runs in; in a checkout, `npm run build`
// does the same): `zcopy build`, which runs scripts/build.js.
const BUILD_COMMAND = 'npx zcopy build'

function withBuildHint (message) {
  return `${message}; zcopy uses the stream fallback. To build the addon for this system (Python 3, make and a C++17 compiler): ${BUILD_COMMAND}`
}

function codedError (code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause })
  error.code = code
  return error
}

// Where a binary node-gyp-build resolved lives, relative to the package root.
function binaryOrigin (root, file) {
  const relative = path.relative(root, file).split(path.sep)
  if (relative[0] === 'prebuilds') return 'prebuild'
  if (relative[0] === 'build') return 'build'
  return 'other'
}

// → { native, loadError, binary }. `platform` and `env` are parameters so that
// every branch can be exercised; the module below calls it once for this process.
function loadNative (root = ROOT, { platform = process.platform, env = process.env, versions = process.versions } = {}) {
  if (platform !== 'linux') {
    const error = codedError('ZCOPY_UNSUPPORTED_PLATFORM',
      `zero-copy needs Linux (sendfile(2)); on ${platform} zcopy uses the stream fallback`)
    return { native: null, loadError: error, binary: null }
  }
  if (versions.bun) {
    const error = codedError('ZCOPY_UNSUPPORTED_RUNTIME',
      `Bun ${versions.bun} does not implement the libuv functions the addon needs (its thread pool, uv_poll, uv_fs_fstat): zcopy uses the stream fallback`)
    return { native: null, loadError: error, binary: null }
  }
  if (env.ZCOPY_NATIVE === '0') {
    const error = codedError('ZCOPY_NATIVE_DISABLED',
      'ZCOPY_NATIVE=0 is set: the native addon was not loaded and zcopy uses the stream fallback')
    return { native: null, loadError: error, binary: null }
  }
  const nodeGypBuild = require('node-gyp-build')
  let file
  try {
    file = nodeGypBuild.resolve(root)
  } catch (err) {
    // node-gyp-build's "No native build was found for platform=... loaded from: dir"
    // carries no code; its message (on one line) is the useful part.
    const found = String(err && err.message).trim().replace(/\s*\n\s*/g, '; ')
    const error = codedError((err && err.code) || 'ZCOPY_NATIVE_NOT_FOUND', withBuildHint(found), err)
    return { native: null, loadError: error, binary: null }
  }
  const binary = { path: file, from: binaryOrigin(root, file) }
  try {
    return { native: require(file), loadError: null, binary }
  } catch (err) {
    const why = err && err.code === 'ERR_DLOPEN_FAILED' ? err.message : `could not load ${file}: ${err && err.message}`
    const error = codedError((err && err.code) || 'ZCOPY_NATIVE_LOAD_FAILED', withBuildHint(why), err)
    return { native: null, loadError: error, binary }
  }
}

const { native, loadError, binary } = loadNative()

module.exports = {
  native,
  loadError,
  binary,
  zeroCopyAvailable: native !== null,
  BUILD_COMMAND,
  loadNative
}
