'use strict'
// A child for fifo-source.test.mjs: pipes a FIFO that a silent writer holds
// open (no byte ever comes) to a destination, aborts after 300 ms, then asks
// for what the parent checks: that fs still works on a one-thread pool while
// the FIFO is read, and that process.exit() is prompt (a pool thread stuck in
// read() of the FIFO would hold it: Node joins the pool at exit).
//   node fifo-source.cjs FIFO DESTINATION(file|socket|writable|fd) SMALL_FILE
const fs = require('node:fs')
const net = require('node:net')
const { Writable } = require('node:stream')
const zcopy = require('../../../lib')

const [fifo, destination, smallFile] = process.argv.slice(2)
const report = (message) => process.stdout.write(JSON.stringify(message) + '\n')

function destinationOf (kind) {
  switch (kind) {
    case 'file': return { target: `${smallFile}.out`, done () {} }
    case 'fd': {
      const fd = fs.openSync(`${smallFile}.out`, 'w')
      return { target: fd, done () { fs.closeSync(fd) } }
    }
    case 'writable': return { target: new Writable({ write (chunk, encoding, callback) { callback() } }), done () {} }
    case 'socket': {
      const server = net.createServer((socket) => socket.resume()).listen(0, '127.0.0.1')
      return {
        ready: new Promise((resolve) => server.once('listening', resolve)).then(() => {
          const socket = net.connect(server.address().port, '127.0.0.1')
          return new Promise((resolve) => socket.once('connect', () => resolve(socket)))
        }),
        done () { server.close() }
      }
    }
  }
}

async function main () {
  // The silent writer: the FIFO has a writer (reads wait, no EOF), no byte comes.
  const writer = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK)
  const { target, ready, done } = destinationOf(destination)
  const to = ready ? await ready : target
  const started = Date.now()
  const settled = zcopy.pipeFile(fifo, to, { signal: AbortSignal.timeout(300) }).then(
    () => ({ settled: 'resolved' }),
    (err) => ({ settled: 'rejected', code: err.code, name: err.name }))
  // fs on the pool (UV_THREADPOOL_SIZE=1) while the FIFO is being read.
  const read = await fs.promises.readFile(smallFile, 'utf8')
  report({ readFile: read, readFileMs: Date.now() - started })
  report(await settled)
  done()
  if (to instanceof net.Socket) to.destroy()
  fs.closeSync(writer)
  report({ exiting: true })
  process.exit(0)
}

main()
