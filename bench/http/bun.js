'use strict'

// Bun as a peer of the HTTP benchmark: its linux-x64 binary from the npm
// registry (the package Bun's own installer uses), pinned by version and
// integrity, fetched once into node_modules/.cache by scripts/registry-fetch.js
// (the Bun that test/support/bun.mjs runs), serving a folder with Bun.serve and
// Bun.file (bun-server.js). Where it cannot be fetched (another platform, no
// registry), the benchmark leaves it out and says why.

const { join } = require('node:path')
const { fetchPackage } = require('../../scripts/registry-fetch')
const { startProgram } = require('./program')

const BUN = {
  name: '@oven/bun-linux-x64',
  version: '1.4.5',
  integrity: 'sha512-IWX9BELoGHAUtMonkeSaNaZwXzRk+oDw6Mk+HBFXd3KHYIBNBsIGRupMZPcgNoDbJpLu6gAJjIoIVPZtt1aJ1g==',
  members: ['bin/bun']
}
const SERVER = join(__dirname, 'bun-server.js')

let fetched = null

// → { bin } (the binary's path), or { reason } why there is none; fetched
// once per process.
function bunBinary () {
  if (fetched === null) {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      fetched = { reason: `Bun ${BUN.version} is fetched for linux-x64 only, not ${process.platform}-${process.arch}` }
    } else {
      try {
        fetched = { bin: join(fetchPackage(BUN), 'bin', 'bun') }
      } catch (err) {
        fetched = { reason: `${BUN.name}@${BUN.version} could not be fetched: ${err.message.split('\n')[0]}` }
      }
    }
  }
  return fetched
}

// → { pid, stop() } once Bun serves `root` on `port` (pid: the parent's with
// workers > 1). `tls`: { cert, key } (paths) or null.
function startBun (root, port, workers = 1, tls = null) {
  const { bin, reason } = bunBinary()
  if (bin === undefined) throw new Error(reason)
  const certificate = tls ? [tls.cert, tls.key] : []
  return startProgram({
    command: bin, args: [SERVER, root, String(port), String(workers), ...certificate], port, notInstalled: reason, quiet: true
  })
}

module.exports = { BUN_PACKAGE: BUN, BUN_VERSION: BUN.version, bunBinary, startBun }
