'use strict'

// nginx with `sendfile on`, one worker (Node serves from one thread too) or as
// many as zcopy serve --workers has, default caching otherwise, serving `root`
// on `port`: the native reference.

const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

function nginxInstalled () {
  return spawnSync('nginx', ['-v']).status === 0
}

// → e.g. '1.22.1', or undefined when nginx is not installed.
function nginxVersion () {
  const { stderr, status } = spawnSync('nginx', ['-v'], { encoding: 'utf8' })
  return status === 0 ? /nginx\/(\S+)/.exec(stderr)?.[1] : undefined
}

function config (root, port, prefix, workers) {
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
  keepalive_requests 1000000;
  client_body_temp_path ${prefix}; proxy_temp_path ${prefix}; fastcgi_temp_path ${prefix};
  uwsgi_temp_path ${prefix}; scgi_temp_path ${prefix};
  types { application/octet-stream bin; }
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`
}

// → { pid, stop() } once nginx accepts connections (pid: the master's).
async function startNginx (root, port, workers = 1) {
  const prefix = mkdtempSync(join(tmpdir(), 'zcopy-nginx-'))
  writeFileSync(join(prefix, 'nginx.conf'), config(root, port, prefix, workers))
  const child = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: 'inherit' })
  const ready = await waitForPort(port)
  if (!ready) throw new Error('nginx did not start')
  return {
    pid: child.pid,
    async stop () {
      child.kill('SIGQUIT')
      await once(child, 'exit')
      rmSync(prefix, { recursive: true, force: true })
    }
  }
}

async function waitForPort (port) {
  const net = require('node:net')
  for (let attempt = 0; attempt < 100; attempt++) {
    const connected = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (connected) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

module.exports = { nginxInstalled, nginxVersion, startNginx }
