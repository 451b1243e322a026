// Child process for fifo.test.mjs: a node:http server, in its own process so its
// thread pool (UV_THREADPOOL_SIZE from the parent) is its own. Routes:
//   /static/<path>   serveStatic(<root>)
//   /abs/<path>      sendFile with the absolute path <root>/<path>, no root option
//   /readfile        times fs.promises.readFile(<other file>) here, in the server:
//                    → { ms }
// Sends { port } over IPC once listening.
//   node fifo-server.mjs <root> <other file>

import { promises as fsp } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import zcopy from '../../../lib/index.js'

const [root, other] = process.argv.slice(2)
const serve = zcopy.serveStatic(root, { fallthrough: false })

function fail (res, err) {
  if (res.headersSent) return res.destroy()
  res.statusCode = err ? err.status || 500 : 404
  res.end()
}

const server = http.createServer((req, res) => {
  if (req.url === '/readfile') {
    const start = performance.now()
    fsp.readFile(other).then(() => res.end(JSON.stringify({ ms: performance.now() - start })), (err) => fail(res, err))
  } else if (req.url.startsWith('/static/')) {
    req.url = req.url.slice('/static'.length)
    serve(req, res, (err) => fail(res, err))
  } else if (req.url.startsWith('/abs/')) {
    zcopy.sendFile(req, res, join(root, decodeURIComponent(req.url.slice('/abs/'.length)))).catch((err) => fail(res, err))
  } else {
    fail(res, null)
  }
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
