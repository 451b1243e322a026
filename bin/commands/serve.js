'use strict'

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { UsageError } = require('../lib/usage-error')
const { integerInRange } = require('../lib/validate')
const { loadZcopy } = require('../lib/load-zcopy')
const { listen } = require('../lib/listen')
const { createRequestLog } = require('../lib/serve/request-log')

exports.command = 'serve [dir]'
exports.describe = 'Serve a folder over HTTP with zcopy (serveStatic)'

exports.builder = yargs => yargs
  .positional('dir', { describe: 'The folder to serve', type: 'string', default: '.' })
  .options({
    port: { describe: 'Port to listen on (0 for any free port)', type: 'string', default: '8080', coerce: integerInRange('port', 0, 65535) },
    host: { describe: 'Address to listen on', type: 'string', default: '127.0.0.1', requiresArg: true }
  })
  .example('$0 serve ./public --port 3000', 'serve ./public on http://127.0.0.1:3000/')

function checkFolder (dir) {
  let stats
  try {
    stats = fs.statSync(dir)
  } catch {
    throw new UsageError(`no such folder: ${dir}`)
  }
  if (!stats.isDirectory()) throw new UsageError(`not a folder: ${dir}`)
}

// What the middleware passed on: nothing matched (404) or an error.
function finish (res, error) {
  const status = error ? error.status || error.statusCode || 500 : 404
  const body = `${http.STATUS_CODES[status] || 'Error'}\n`
  if (res.headersSent) return res.destroy()
  res.statusCode = status
  res.setHeader('content-type', 'text/plain; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(body)
}

function urlOf ({ address, family, port }) {
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}/`
}

exports.handler = async argv => {
  const root = path.resolve(argv.dir)
  checkFolder(root)
  const zcopy = loadZcopy()
  const write = line => process.stdout.write(line + '\n')
  const log = createRequestLog(write)
  const serve = zcopy.serveStatic(root, { onSent: log.onSent })
  const server = http.createServer((req, res) => {
    log.logRequest(req, res)
    serve(req, res, error => finish(res, error))
  })
  const address = await listen(server, argv.port, argv.host)
  write(`zcopy serving ${root} at ${urlOf(address)} (zero-copy ${zcopy.zeroCopyAvailable ? 'on' : 'off: stream fallback'}); Ctrl-C to stop`)
  await new Promise(resolve => {
    const stop = () => {
      write('zcopy: stopping')
      server.close(resolve)
      server.closeAllConnections()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}
