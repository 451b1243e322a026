'use strict'

// h2o tuned as a production static server, as nginx is (nginx.js): no access
// log (h2o logs nothing unless given an access-log), ETags on (its default:
// they make revalidations 304s), keep-alive with no request limit (its
// default), one thread per nginx worker (one, as Node serves from one thread,
// or as many as zcopy serve --workers has), serving `root` on `port`. With
// `sendCompressed`, it answers from .br/.gz siblings built beforehand
// (file.send-compressed), as nginx gzip_static does. There is no
// open_file_cache to turn on: h2o 2.2 keeps an open file for one turn of its
// event loop only (strace: one open per request on an idle keep-alive
// connection), so under load a hot file is opened once per turn, not once.

const { spawnSync } = require('node:child_process')
const { mkdtempSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startProgram } = require('./program')

const NOT_INSTALLED = 'h2o is not installed (apt-get install h2o)'

function h2oInstalled () {
  return spawnSync('h2o', ['--version']).status === 0
}

// → e.g. '2.2.5', or undefined when h2o is not installed.
function h2oVersion () {
  const { stdout, status } = spawnSync('h2o', ['--version'], { encoding: 'utf8' })
  return status === 0 ? /h2o version (\S+)/.exec(stdout)?.[1] : undefined
}

function config (root, port, prefix, { workers, tls, sendCompressed }) {
  const ssl = tls
    ? `\n  ssl:\n    certificate-file: ${tls.cert}\n    key-file: ${tls.key}\n    minimum-version: TLSv1.3`
    : ''
  // Started as root, h2o would switch to nobody, who cannot read a 0700
  // temporary folder (nginx runs as root here for the same reason).
  return `${process.getuid?.() === 0 ? 'user: root\n' : ''}num-threads: ${workers}
error-log: ${prefix}/error.log
file.etag: ON
file.send-compressed: ${sendCompressed ? 'ON' : 'OFF'}
http1-upgrade-to-http2: OFF
listen:
  host: 127.0.0.1
  port: ${port}${ssl}
hosts:
  default:
    paths:
      /:
        file.dir: ${root}
`
}

// → { pid, stop() } once h2o accepts connections. `tls`: { cert, key } to
// listen with TLS 1.3 only.
function startH2o (root, port, workers = 1, tls = null, { sendCompressed = false } = {}) {
  const prefix = mkdtempSync(join(tmpdir(), 'zcopy-h2o-'))
  writeFileSync(join(prefix, 'h2o.conf'), config(root, port, prefix, { workers, tls, sendCompressed }))
  return startProgram({ command: 'h2o', args: ['-c', join(prefix, 'h2o.conf')], port, prefix, notInstalled: NOT_INSTALLED, quiet: true })
}

module.exports = { NOT_INSTALLED, h2oInstalled, h2oVersion, startH2o }
