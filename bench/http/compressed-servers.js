'use strict'

// The compressed-text servers (issue 48), shared by bench/http/compressed.js
// (all of them, side by side) and bench/http/run.js's `compressed` case (zcopy
// serve against nginx gzip_static, h2o file.send-compressed and Caddy
// precompressed): the folders they
// serve, how each one starts, and how a request asks as a browser does.
//
// Folders: `plain` holds the bundle alone (the servers that compress it
// themselves), `siblings` holds it with .br (brotli 11) and .gz (gzip 9) files
// beside it, as a build step makes them.

const { execFileSync, spawn } = require('node:child_process')
const { once } = require('node:events')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const zlib = require('node:zlib')
const { makeBundle } = require('./bundle')
const { startCaddy } = require('./caddy')
const { startH2o } = require('./h2o')
const { startNginx } = require('./nginx')

const ACCEPT = 'gzip, deflate, br' // what every browser sends
const BUNDLE = '/bundle.js'
const ZCOPY = path.join(__dirname, '..', '..', 'bin', 'zcopy.js')
const NODE_SERVER = path.join(__dirname, 'compressed-server.js')

// Writes the bundle (`size` bytes, 212 KiB by default) to `base`/plain and, with
// its siblings, to `base`/siblings. → { plain, siblings, size }
function writeFolders (base, size) {
  const plain = path.join(base, 'plain')
  const siblings = path.join(base, 'siblings')
  fs.mkdirSync(plain)
  fs.mkdirSync(siblings)
  const bundle = makeBundle(size)
  fs.writeFileSync(path.join(plain, 'bundle.js'), bundle)
  fs.writeFileSync(path.join(siblings, 'bundle.js'), bundle)
  fs.writeFileSync(path.join(siblings, 'bundle.js.br'), zlib.brotliCompressSync(bundle, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bundle.length } }))
  fs.writeFileSync(path.join(siblings, 'bundle.js.gz'), zlib.gzipSync(bundle, { level: 9 }))
  return { plain, siblings, size: bundle.length }
}

function installed (command, versionArgs) {
  try {
    execFileSync(command, versionArgs, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

// → { pid, stop() } once `port` answers.
async function startProcess (command, argv, port, options = {}) {
  const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'inherit'], ...options })
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${command} exited (${child.exitCode})`)
    const up = await new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: BUNDLE, agent: false }, (res) => { res.resume(); res.on('end', () => resolve(true)) })
      req.on('error', () => resolve(false))
    })
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    pid: child.pid,
    async stop () {
      if (child.exitCode === null) child.kill('SIGTERM')
      if (child.exitCode === null) await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 3000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }
}

// nginx tuned as in every benchmark (nginx.js), with gzip per request (`on`,
// level 6) or from prebuilt .gz siblings (`static`).
function startGzipNginx (root, port, gzip) {
  return startNginx(root, port, 1, null, {
    types: 'application/javascript js;',
    directives: gzip === 'static' ? 'gzip_static on; gzip_vary on;' : 'gzip on; gzip_comp_level 6; gzip_vary on; gzip_types application/javascript;'
  })
}

// name → { folder: 'plain' | 'siblings', needs?: [command, versionArgs],
// start(root, port) → Promise<{ pid, stop() }>, variants?: true (zcopy: makes
// its variant after the first request) }
const SERVERS = {
  'zcopy-serve': { folder: 'plain', variants: true, start: (root, port) => startProcess(process.execPath, [ZCOPY, 'serve', root, '--port', String(port), '--quiet'], port) },
  'zcopy-serve-node': { folder: 'plain', variants: true, start: (root, port) => startProcess(process.execPath, [ZCOPY, 'serve', root, '--port', String(port), '--quiet', '--no-native-lane'], port) },
  'zcopy-serve-pre': { folder: 'siblings', start: (root, port) => startProcess(process.execPath, [ZCOPY, 'serve', root, '--port', String(port), '--quiet', '--precompressed', '--no-compress'], port) },
  'zcopy-express': { folder: 'plain', variants: true, start: (root, port) => startProcess(process.execPath, [NODE_SERVER, 'zcopy-express', root, String(port)], port) },
  'static-express': { folder: 'plain', start: (root, port) => startProcess(process.execPath, [NODE_SERVER, 'static-express', root, String(port)], port) },
  sirv: { folder: 'siblings', start: (root, port) => startProcess(process.execPath, [NODE_SERVER, 'sirv', root, String(port)], port) },
  'nginx-gzip': { folder: 'plain', needs: ['nginx', ['-v']], start: (root, port) => startGzipNginx(root, port, 'on') },
  'nginx-gzip-static': { folder: 'siblings', needs: ['nginx', ['-v']], start: (root, port) => startGzipNginx(root, port, 'static') },
  'h2o-send-compressed': { folder: 'siblings', needs: ['h2o', ['--version']], start: (root, port) => startH2o(root, port, 1, null, { sendCompressed: true }) },
  'caddy-encode': { folder: 'plain', needs: ['caddy', ['version']], start: (root, port) => startCaddy(root, port, null, null, { mode: 'encode' }) },
  'caddy-precompressed': { folder: 'siblings', needs: ['caddy', ['version']], start: (root, port) => startCaddy(root, port, null, null, { mode: 'precompressed' }) }
}

// → whether server `name` can run here (its program is installed).
function runnable (name) {
  const { needs } = SERVERS[name]
  return needs === undefined || installed(...needs)
}

// One request as a browser asks: → { encoding, bytes, made } of the body
// (`made`: compressed with a Content-Length, i.e. not per request).
function probe (port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: BUNDLE, agent: false, headers: { 'accept-encoding': ACCEPT } }, (res) => {
      let bytes = 0
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('end', () => resolve({ encoding: res.headers['content-encoding'] || 'identity', bytes, made: res.headers['content-encoding'] !== undefined && res.headers['content-length'] !== undefined }))
    }).on('error', reject)
  })
}

// Asks until server `name` answers with its variant (zcopy's first answer is
// the file itself, or compression()'s per request): → { answer, readyMs }, the
// time it took to make it.
async function untilCompressed (name, port) {
  const readyAt = Date.now()
  let answer = await probe(port)
  if (SERVERS[name].variants) {
    for (let i = 0; i < 1000 && !answer.made; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      answer = await probe(port)
    }
  }
  return { answer, readyMs: Date.now() - readyAt }
}

module.exports = { ACCEPT, BUNDLE, SERVERS, probe, runnable, untilCompressed, writeFolders }
