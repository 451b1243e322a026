'use strict'

// Loads the native addon (a prebuild from prebuilds/ or a local build/) through
// node-gyp-build. `native` is null when it cannot be loaded, or when
// ZCOPY_NATIVE=0 asks for the pure-JS fallback; zero-copy is then unavailable.

const path = require('node:path')

function loadNative () {
  if (process.env.ZCOPY_NATIVE === '0') return { native: null, loadError: null }
  try {
    return { native: require('node-gyp-build')(path.join(__dirname, '..')), loadError: null }
  } catch (err) {
    return { native: null, loadError: err }
  }
}

const { native, loadError } = loadNative()

module.exports = {
  native,
  loadError,
  zeroCopyAvailable: native !== null
}
