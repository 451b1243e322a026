'use strict'

const fs = require('node:fs')
const http = require('node:http')
const { measure } = require('./measure')
const { startSink, checkReceived } = require('./sink-process')
const { listen } = require('../listen')
const { closeServer } = require('./close-server')

// --mode http: a node:http server in this process answers GET requests for
// one file; a keep-alive client with `concurrency` connections runs in a
// child process (sink.js). One op is one request, asked for over IPC and
// ended when the client has read the whole body.

const handlers = {
  zcopy: ({ file, zcopy }) => (req, res) => {
    zcopy.sendFile(req, res, file).catch((err) => res.destroy(err))
  },
  // How Node serves a file today: stat for the length, then pipe a stream.
  stream: ({ file }) => (req, res) => {
    fs.stat(file, (err, stats) => {
      if (err) return res.destroy(err)
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': stats.size })
      fs.createReadStream(file).on('error', (streamError) => res.destroy(streamError)).pipe(res)
    })
  }
}

async function runHttpMode ({ file, size, concurrency, duration, iterations, method, zcopy }) {
  const server = http.createServer(handlers[method]({ file, zcopy }))
  const { port } = await listen(server, 0, '127.0.0.1')
  let sink = null
  let result = null
  try {
    sink = await startSink(['http', `http://127.0.0.1:${port}/file`, concurrency])
    result = await measure({
      size,
      concurrency,
      duration,
      iterations,
      op: async () => {
        const { status, bytes } = await sink.request({})
        if (status !== 200) throw new Error(`the server answered ${status}`)
        return bytes
      }
    })
  } finally {
    const received = sink && await sink.close()
    await closeServer(server)
    if (result) checkReceived(received, result, size)
  }
  return result
}

module.exports = { runHttpMode, httpMethods: Object.keys(handlers) }
