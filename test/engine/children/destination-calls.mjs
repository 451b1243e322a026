// Run under strace by destination-calls.test.mjs: three 1 MiB transfers, each
// between two marker stats (of names that do not exist) that find it in the
// trace of this process's main thread. Prints its pid, then "done".
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { pipeFile, sendfile } from '../../../lib/index.js'
import { drain, socketPair } from '../../support/net.mjs'

const [dir] = process.argv.slice(2)
const source = path.join(dir, 'source.bin')
const length = fs.statSync(source).size
const mark = (name) => { try { fs.statSync(`/zcopy-mark-${name}`) } catch {} }
process.stdout.write(`${process.pid}\n`)

// To a loopback socket, from a descriptor; twice (the first one warms up).
for (const round of ['warm', 'socket']) {
  const { client, peer } = await socketPair()
  const received = drain(peer)
  const fd = fs.openSync(source)
  mark(`${round}-begin`)
  await pipeFile(fd, client)
  mark(`${round}-end`)
  client.end()
  await received
  fs.closeSync(fd)
  await once(client, 'close')
}

// To a regular file, descriptor to descriptor.
const inFd = fs.openSync(source)
const outFd = fs.openSync(path.join(dir, 'copy.bin'), 'w')
mark('file-begin')
await sendfile(outFd, inFd, 0, length)
mark('file-end')
fs.closeSync(inFd)
fs.closeSync(outFd)
process.stdout.write('done\n')
