// serveStatic inside a Worker: a file is served, the middleware closed, the Worker
// exits. Prints the status; Node prints a warning to stderr if a descriptor was
// closed by something other than what opened it.
const { Worker, isMainThread, workerData } = require('node:worker_threads')
const path = require('node:path')

if (isMainThread) {
  const root = process.argv[2]
  const worker = new Worker(__filename, { workerData: { root } })
  worker.on('message', (m) => console.log(m))
  worker.on('exit', (code) => { process.exitCode = code })
} else {
  const http = require('node:http')
  const { parentPort } = require('node:worker_threads')
  const zcopy = require(path.join(__dirname, '../../../lib/index.js'))
  const serve = zcopy.serveStatic(workerData.root)
  const server = http.createServer((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  server.listen(0, '127.0.0.1', () => {
    http.get({ host: '127.0.0.1', port: server.address().port, path: '/hello.txt' }, (res) => {
      res.resume()
      res.on('end', async () => {
        await serve.close()
        server.close()
        parentPort.postMessage(`status ${res.statusCode}`)
      })
    })
  })
}
