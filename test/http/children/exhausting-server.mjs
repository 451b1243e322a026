// serveStatic in plain node:http, in its own process, which runs itself out of
// descriptors on command. argv[2] is the directory to serve. Over IPC it sends
// { port } once listening, answers { cmd: 'exhaust' } by opening /dev/null until
// EMFILE ({ opened }), { cmd: 'release' } by closing those ({ released }).

import fs from 'node:fs'
import http from 'node:http'
import zcopy from '../../../lib/index.js'

const serve = zcopy.serveStatic(process.argv[2])
const server = http.createServer((req, res) => {
  serve(req, res, (err) => {
    if (res.headersSent) return res.destroy()
    res.statusCode = err ? err.status || 500 : 404
    res.end()
  })
})

let spare = []
process.on('message', ({ cmd }) => {
  if (cmd === 'exhaust') {
    try {
      for (;;) spare.push(fs.openSync('/dev/null', 'r'))
    } catch (err) {
      if (err.code !== 'EMFILE') throw err
    }
    process.send({ opened: spare.length })
  } else if (cmd === 'release') {
    for (const fd of spare) fs.closeSync(fd)
    process.send({ released: spare.length })
    spare = []
  }
})

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
