'use strict'

// One Node server of the compressed-asset benchmark (compressed.js), by kind:
//   zcopy-express     Express + compression() + zcopy serveStatic({ compress: true })
//   static-express    Express + compression() + express.static
//   sirv              node:http + sirv with prebuilt siblings ({ brotli, gzip })
// usage: node compressed-server.js KIND ROOT PORT

const http = require('node:http')
const path = require('node:path')

const [kind, root, port] = process.argv.slice(2)
const lib = path.join(__dirname, '..', '..', 'lib')

function app () {
  if (kind === 'zcopy-express' || kind === 'static-express') {
    const express = require('express')
    const compression = require('compression')
    const server = express()
    server.use(compression())
    server.use(kind === 'zcopy-express' ? require(lib).serveStatic(root, { compress: true }) : express.static(root))
    return server
  }
  if (kind === 'sirv') {
    const handler = require('sirv')(root, { brotli: true, gzip: true, etag: true })
    return (req, res) => handler(req, res, () => { res.statusCode = 404; res.end() })
  }
  throw new Error(`unknown server kind ${kind}`)
}

http.createServer(app()).listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'))
