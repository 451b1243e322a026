// An HTTPS server for the TLS trap tests, in its own process so that its busy
// moments do not stall the client. argv[2]: raw (Node as is) or protected
// (zcopy.protectServer); argv[3]: https or h2 (node:http2 with HTTP/1.1);
// argv[4]: the timeout given to protectServer, in ms. Routes: /big (32 MiB,
// then the event loop is busy 150 ms), /reset (256 KiB), anything else 1 KiB;
// every answer is asynchronous. Over IPC: { ready, port }; { cmd: 'stats' }
// → { connections, paused } (server.getConnections(), HPE_PAUSED errors seen).

import http2 from 'node:http2'
import https from 'node:https'
import zcopy from '../../../lib/index.js'
import { tls } from '../../support/http.mjs'

const [mode, kind, timeout] = process.argv.slice(2)
const bodies = { '/big': Buffer.alloc(32 * 1024 * 1024, 'b'), '/reset': Buffer.alloc(256 * 1024, 'r') }
const small = Buffer.alloc(1024, 's')
let paused = 0

function handler (req, res) {
  setImmediate(() => {
    const body = bodies[req.url] || small
    res.setHeader('Content-Length', body.length)
    res.end(body)
    if (req.url === '/big') {
      const until = Date.now() + 150
      while (Date.now() < until);
    }
  })
}

const server = kind === 'h2'
  ? http2.createSecureServer({ ...tls, allowHTTP1: true }, handler)
  : https.createServer(tls, handler)
// Node's own clientError handling (a 400 when it can) stays: only counted.
server.on('secureConnection', (socket) => socket.on('error', (err) => { if (err.code === 'HPE_PAUSED') paused++ }))
if (mode === 'protected') zcopy.protectServer(server, { timeout: Number(timeout) })
server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }))
process.on('message', (message) => {
  if (message.cmd === 'stats') server.getConnections((err, connections) => process.send({ connections, paused, error: err?.message }))
})
