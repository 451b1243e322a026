'use strict'

// `zcopy serve` as its users start it, for bench/http/run.js --workers N: the
// CLI (bin/zcopy.js serve ROOT --port 0 --quiet --workers N [--ssl-*]) in a child
// process. → { port, pid, stop() } once it listens (pid: the primary's, whose
// children are the workers).

const { spawn } = require('node:child_process')
const { join } = require('node:path')

const CLI = join(__dirname, '..', '..', 'bin', 'zcopy.js')
const LISTENING = /at https?:\/\/[^ ]+:(\d+)\/ \(/

// `tls`: { cert, key, http2? } to serve HTTPS (--ssl-cert, --ssl-key; --http2
// when `http2`); `env`: variables
// set for it on top of this process's (e.g. ZCOPY_PREBUILD); `cli`: the
// bin/zcopy.js to run (another checkout's; default this one's); `wrap`: an argv
// prefix that runs Node (e.g. ['valgrind', '--tool=callgrind']); `args`: more
// options (e.g. ['--no-native-lane']); `signal`: an AbortSignal that kills it.
async function startZcopyServe (root, workers, { tls = null, env = {}, cli = CLI, wrap = [], args = [], signal } = {}) {
  const certificate = tls ? ['--ssl-cert', tls.cert, '--ssl-key', tls.key, ...(tls.http2 ? ['--http2'] : [])] : []
  const [command, ...prefix] = [...wrap, process.execPath]
  const child = spawn(command, [...prefix, cli, 'serve', root, '--port', '0', '--quiet', '--workers', String(workers), ...certificate, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
    signal
  })
  const exited = new Promise((resolve) => child.once('exit', (...how) => resolve(how))) // not once(): an 'error' would reject it
  const port = await new Promise((resolve, reject) => {
    child.on('error', reject) // not started, or killed by `signal`
    let banner = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      banner += chunk
      const match = LISTENING.exec(banner)
      if (match) resolve(Number(match[1]))
    })
    exited.then(([code, signal]) => reject(new Error(`zcopy serve exited before listening (${signal ?? `exit code ${code}`})`)))
  })
  return {
    port,
    pid: child.pid,
    async stop () {
      child.kill('SIGTERM')
      await exited
    }
  }
}

module.exports = { startZcopyServe }
