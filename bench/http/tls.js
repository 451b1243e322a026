'use strict'

// TLS for bench/http/run.js --tls: one self-signed certificate (P-256, for
// localhost and 127.0.0.1) made with the openssl CLI in its own temporary
// folder, outside the served root, shared by every server of the run. The
// servers keep their TLS defaults, which negotiate TLS 1.3 with wrk's OpenSSL.

const { spawnSync } = require('node:child_process')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

// → { cert, key, remove() }: paths of the PEM files.
function makeCertificate () {
  const dir = mkdtempSync(join(tmpdir(), 'zcopy-bench-tls-'))
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  const { status, stderr, error } = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-days', '2', '-keyout', key, '-out', cert
  ], { encoding: 'utf8' })
  if (status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`--tls needs the openssl CLI to make a certificate: ${error?.message ?? stderr}`)
  }
  return { cert, key, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

module.exports = { makeCertificate }
