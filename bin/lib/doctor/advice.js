'use strict'

// One line: why zero-copy is not working and what to do about it; null when it works.

// zcopy has no install script: where no prebuild serves, this command builds
// the addon (`zcopy build`, which runs scripts/build.js of the installed package).
const { BUILD_COMMAND } = require('./addon')

const BINARY = { prebuild: 'the prebuilt binary', build: 'the locally built binary', other: 'the binary' }

function missingTools ({ python3, make, cxx }) {
  return [python3 ? null : 'python3', make ? null : 'make', cxx ? null : 'a C++ compiler'].filter(Boolean)
}

function notFound ({ buildTools, env }) {
  // node-gyp-build looks only where ZCOPY_PREBUILD points, when it is set.
  if (env.ZCOPY_PREBUILD) {
    return `ZCOPY_PREBUILD is set to ${env.ZCOPY_PREBUILD}, which holds no zcopy binary for this system: ` +
      'unset it to use the prebuilt or built binary, or point it at a folder that holds one'
  }
  const missing = missingTools(buildTools)
  if (missing.length > 0) {
    return 'no prebuilt binary fits this system and the addon was never built; building it needs Python 3, make ' +
      `and a C++17 compiler, and this system lacks ${missing.join(', ')} (Debian/Ubuntu: apt-get install -y python3 make g++); ` +
      `then run: ${BUILD_COMMAND}`
  }
  return `no prebuilt binary fits this system and the addon was never built here; build it with: ${BUILD_COMMAND}`
}

function firstLine (text) {
  return String(text).split('\n')[0].trim()
}

function adviceFor ({ addon, selfTest, platform, buildTools }, env = process.env) {
  if (!addon.loaded) {
    const { code, message } = addon.loadError || {}
    switch (code) {
      case 'ZCOPY_UNSUPPORTED_PLATFORM':
        return `zero-copy needs Linux; on ${platform} zcopy works on streams, and there is nothing to fix`
      case 'ZCOPY_UNSUPPORTED_RUNTIME':
        return 'Bun lacks the libuv functions the addon needs; zcopy works on streams there (run it on Node for zero-copy)'
      case 'ZCOPY_NATIVE_DISABLED':
        return 'ZCOPY_NATIVE=0 is set, which forces the stream fallback: unset it to use sendfile'
      case 'ZCOPY_NATIVE_NOT_FOUND':
        return notFound({ buildTools, env })
      case 'ERR_DLOPEN_FAILED':
        return `${BINARY[addon.from] || BINARY.other} does not load here (${firstLine(message)}); ` +
          `build one for this system with: ${BUILD_COMMAND}`
      default:
        return `the native addon failed to load (${firstLine(message)}); rebuild it with: ${BUILD_COMMAND}`
    }
  }
  if (selfTest.error !== null) {
    return `the native addon is loaded but the self-test failed (${selfTest.error.code ?? 'error'}: ${selfTest.error.message}); please report it`
  }
  if (!selfTest.zeroCopy) {
    return 'the native addon is loaded but the self-test\'s bytes went by streams; please report it'
  }
  return null
}

module.exports = { adviceFor }
