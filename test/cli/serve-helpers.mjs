// Shared by the serve-*.test.mjs files: a served folder and a running CLI.
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { startCli, waitForStdout } from './cli.mjs'
import { exchange as rawExchange, portOf, withoutDate } from '../support/raw-exchange.mjs'
import { makeRoot } from '../support/files.mjs'

export { makeRoot }

// Starts `zcopy serve root --port 0 ...args`; → { cli, url, stop() → output }.
export async function startServe (root, args = [], { env = {}, port = ['--port', '0'] } = {}) {
  const cli = startCli(['serve', root, ...port, ...args], { env })
  const [, url] = await waitForStdout(cli, /at (https?:\/\/[^ ]+\/) \(/)
  return {
    cli,
    url,
    async stop (signal = 'SIGTERM') {
      cli.child.kill(signal)
      return cli.output()
    }
  }
}

// How many descriptors the server holds whose /proc link `matches`.
export function descriptorsHeld (server, matches) {
  const dir = `/proc/${server.cli.child.pid}/fd`
  return fs.readdirSync(dir).filter((fd) => {
    try {
      return matches(fs.readlinkSync(`${dir}/${fd}`))
    } catch {
      return false // closed meanwhile
    }
  }).length
}

// How many descriptors of `file` the server holds: the open-file cache's one,
// and with the native lane one more of its own for each row that answers with
// it (or checks it: a variant's source).
export function descriptorsOf (server, file) {
  const real = fs.realpathSync(file)
  return descriptorsHeld(server, (target) => target === real)
}

// Raw exchanges with a served folder (the native lane's tests), through
// test/support/raw-exchange.mjs.
export { portOf, withoutDate }

// Writes `chunks` on one connection (`gapMs` apart; with `end`, then ends its
// side) and resolves with all it received until the server closed it.
export async function exchange (server, chunks, { gapMs = 0, end = false } = {}) {
  return (await rawExchange(portOf(server), chunks, { gapMs, end })).bytes
}

// A GET of `path` (with the header lines `fields`, each ending in CRLF) on a
// connection of its own: → { status, headers, body (latin1), bytes }.
export async function get (server, path, fields = '') {
  const bytes = await exchange(server, [`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${fields}Connection: close\r\n\r\n`])
  const headEnd = bytes.indexOf('\r\n\r\n')
  const [status, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => line.split(': ')).map(([name, value]) => [name.toLowerCase(), value]))
  return { status: Number(status.split(' ')[1]), headers, body: bytes.subarray(headEnd + 4).toString('latin1'), bytes }
}

// The access log lines of `server` for `path`, once a request sent after
// everything before it has its line.
export async function loggedLines (server, path) {
  const marker = `/marker-${Math.random().toString(36).slice(2)}`
  await get(server, marker)
  while (!server.cli.stdout().includes(marker)) await sleep(20)
  return server.cli.stdout().split('\n').filter((line) => line.startsWith(`GET ${path} `) || line.startsWith(`HEAD ${path} `))
}
