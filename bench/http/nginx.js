'use strict'

// nginx tuned as a production static server is (sendfile, tcp_nopush,
// open_file_cache so that a hot file costs no open/fstat/close, keep-alive,
// access_log off), one worker (Node serves from one thread too) or as many as
// zcopy serve --workers has, serving `root` on `port`: the native reference, at
// its strongest. Every other server in the benchmark keeps its own defaults.

const { spawnSync } = require('node:child_process')
const { mkdtempSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { startProgram } = require('./program')

// What the benchmarks say when nginx is not on the PATH.
const NOT_INSTALLED = 'nginx is not installed (apt-get install nginx-light): it is the anchor of these benchmarks'

function nginxInstalled () {
  return spawnSync('nginx', ['-v']).status === 0
}

// → e.g. '1.22.1', or undefined when nginx is not installed.
function nginxVersion () {
  const { stderr, status } = spawnSync('nginx', ['-v'], { encoding: 'utf8' })
  return status === 0 ? /nginx\/(\S+)/.exec(stderr)?.[1] : undefined
}

function config (root, port, prefix, { workers, tls, types, directives }) {
  const listen = tls
    ? `listen 127.0.0.1:${port} ssl${tls.http2 ? ' http2' : ''};\n    ssl_certificate ${tls.cert};\n    ssl_certificate_key ${tls.key};\n    ssl_protocols TLSv1.3;\n    ssl_session_cache shared:SSL:10m;`
    : `listen 127.0.0.1:${port};`
  return `
user root;
worker_processes ${workers};
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  open_file_cache max=20000 inactive=60s;
  open_file_cache_valid 60s;
  open_file_cache_min_uses 1;
  open_file_cache_errors on;
  keepalive_timeout 75s;
  keepalive_requests 1000000;
  client_body_temp_path ${prefix}; proxy_temp_path ${prefix}; fastcgi_temp_path ${prefix};
  uwsgi_temp_path ${prefix}; scgi_temp_path ${prefix};
  types { ${types} }
  ${directives}
  server {
    ${listen}
    root ${root};
  }
}
`
}

// → { pid, stop() } once nginx accepts connections (pid: the master's). `tls`:
// { cert, key, http2? } to listen with TLS 1.3 (nginx's own OpenSSL, no kTLS
// here), with HTTP/2 beside HTTP/1.1 when `http2`. `http`: { types, directives }
// for the http block, the MIME types (default: every file octet-stream) and
// more directives (e.g. gzip's).
function startNginx (root, port, workers = 1, tls = null, { types = 'application/octet-stream bin;', directives = '' } = {}) {
  const prefix = mkdtempSync(join(tmpdir(), 'zcopy-nginx-'))
  writeFileSync(join(prefix, 'nginx.conf'), config(root, port, prefix, { workers, tls, types, directives }))
  return startProgram({
    command: 'nginx', args: ['-p', prefix, '-c', join(prefix, 'nginx.conf')], port, prefix, notInstalled: NOT_INSTALLED, stopSignal: 'SIGQUIT'
  })
}

module.exports = { NOT_INSTALLED, nginxInstalled, nginxVersion, startNginx }
