'use strict'

// Caddy's file_server as a peer, as its users run it: no access log (Caddy logs
// requests only when told to), ETag and Last-Modified with 304s (its defaults),
// no admin endpoint, no automatic HTTPS. In the plain cases GOMAXPROCS is the
// worker count (1: one thread runs Go code, as nginx has one worker; N with
// --workers N); the compressed case leaves it unset, as it always did, and
// either compresses per request (`encode`) or sends prebuilt siblings
// (`precompressed`).

const { spawnSync } = require('node:child_process')
const { mkdtempSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startProgram } = require('./program')

const NOT_INSTALLED = 'caddy is not installed (apt-get install caddy)'
const FILE_SERVER = {
  plain: 'file_server',
  encode: 'encode zstd gzip\n  file_server',
  precompressed: 'file_server {\n    precompressed br gzip\n  }'
}

function caddyInstalled () {
  return spawnSync('caddy', ['version']).status === 0
}

// → e.g. '2.6.2', or undefined when Caddy is not installed.
function caddyVersion () {
  const { stdout, status } = spawnSync('caddy', ['version'], { encoding: 'utf8' })
  return status === 0 ? /v?(\d+\.\d+\.\d+)/.exec(stdout)?.[1] : undefined
}

function caddyfile (root, port, { tls, mode }) {
  const site = tls
    ? `https://127.0.0.1:${port} {\n  tls ${tls.cert} ${tls.key} {\n    protocols tls1.3\n  }`
    : `http://127.0.0.1:${port} {`
  return `{
  admin off
  auto_https off
}
${site}
  root * ${root}
  ${FILE_SERVER[mode]}
}
`
}

// → { pid, stop() } once Caddy accepts connections. `workers`: GOMAXPROCS, or
// null to leave it to Go (every core); `tls`: { cert, key } to serve HTTPS
// with TLS 1.3 only; `mode`: plain, encode or precompressed.
function startCaddy (root, port, workers = 1, tls = null, { mode = 'plain' } = {}) {
  const prefix = mkdtempSync(join(tmpdir(), 'zcopy-caddy-'))
  writeFileSync(join(prefix, 'Caddyfile'), caddyfile(root, port, { tls, mode }))
  return startProgram({
    command: 'caddy',
    args: ['run', '--config', join(prefix, 'Caddyfile'), '--adapter', 'caddyfile'],
    port,
    prefix,
    notInstalled: NOT_INSTALLED,
    // Caddy keeps its state under HOME or XDG folders: the prefix, removed with it.
    env: { HOME: prefix, XDG_DATA_HOME: prefix, XDG_CONFIG_HOME: prefix, ...(workers === null ? {} : { GOMAXPROCS: String(workers) }) },
    quiet: true
  })
}

module.exports = { NOT_INSTALLED, caddyInstalled, caddyVersion, startCaddy }
