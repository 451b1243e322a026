'use strict'

const { spawn } = require('node:child_process')
const path = require('node:path')
const { renderExamples } = require('../lib/help-layout')

// scripts/build.js of the package this CLI belongs to (the installed one under
// node_modules, or a checkout), so that the build command zcopy names is
// `npx zcopy build` rather than a path into node_modules.
const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'build.js')

const EXAMPLES = [
  ['$0 build', 'build the addon for this system, then check it loads'],
  ['$0 doctor', 'then check zero-copy end to end']
]

exports.command = 'build'
exports.describe = 'Build the native addon from source, for a system no prebuilt binary serves'

exports.builder = (yargs) => yargs
  .epilog(`${renderExamples(EXAMPLES)}

zcopy has no install script: on Linux x64 and arm64 (glibc 2.28+ or musl) a prebuilt binary serves and \
nothing needs building. Elsewhere this builds build/Release/zcopy.node, which zcopy then prefers. Needs Python 3, \
make and a C++17 compiler; node-gyp and node-addon-api (build-only) are fetched with npm when missing. \
Exit code 0 when the built binary loads, 1 when the build failed (the last line says why); zcopy works \
on streams either way.`)

// The script's output passes through as it comes; its exit code is this one's.
exports.handler = () => new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [SCRIPT], { stdio: 'inherit' })
  child.on('error', reject)
  child.on('close', (code, signal) => {
    process.exitCode = code ?? 1
    if (signal) process.stderr.write(`zcopy: the build was stopped by ${signal}\n`)
    resolve()
  })
})
