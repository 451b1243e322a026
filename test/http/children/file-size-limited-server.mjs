// serveStatic({ compress }) in a process whose files may not grow past the
// limit its parent set (ulimit -f): every variant written to the cache folder
// fails (EFBIG), as on a full disk. Writes its port, then, on 'report' on
// stdin, the warnings it emitted and stats().compressed as JSON.
import http from 'node:http'
import zcopy from '../../../lib/index.js'

process.on('SIGXFSZ', () => {}) // the write fails with EFBIG instead of killing the process
const [root, cacheDir] = process.argv.slice(2)
const warnings = []
process.on('warning', (warning) => { if (warning.code === 'ZCOPY_COMPRESS') warnings.push(warning.message) })
const serve = zcopy.serveStatic(root, { compress: { cacheDir }, memoryCache: 0 })
const server = http.createServer((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`))
process.stdin.on('data', async () => {
  await serve.compressed()
  await new Promise((resolve) => setImmediate(resolve)) // process.emitWarning emits on a later tick
  process.stdout.write(JSON.stringify({ warnings, stats: serve.stats().compressed }) + '\n')
})
