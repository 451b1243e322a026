// serveStatic(argv[2], JSON.parse(argv[3] || '{}')) on node:http, in its own process so that a test can slow
// its system calls down (strace) and see whether its event loop waits for them.
// GET /__lag → the longest the event loop was kept from running, in ms, since
// the server started. Over IPC: { port } once listening.

import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import zcopy from '../../../lib/index.js'

const lag = monitorEventLoopDelay({ resolution: 10 })
lag.enable()
const serve = zcopy.serveStatic(process.argv[2], JSON.parse(process.argv[3] || '{}'))
const server = http.createServer((req, res) => {
  if (req.url === '/__lag') return res.end(JSON.stringify({ maxMs: lag.max / 1e6 }))
  serve(req, res, () => {
    res.statusCode = 404
    res.end('not found')
  })
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
process.on('disconnect', () => process.exit(0))
