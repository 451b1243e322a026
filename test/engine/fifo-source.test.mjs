// A non-regular source (a FIFO here) is read without a blocking call on the
// thread pool: an abort frees everything at once, so the process exits when
// asked (Node joins the pool at exit: a thread stuck in read(2) of a silent FIFO
// would hold it for ever), fs keeps working on a one-thread pool meanwhile, and a
// FIFO with a real writer still moves every byte, to every kind of destination.
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeTempDir, openFdCount, removeTempDir, sha256 } from '../support/files.mjs'

const CHILD = fileURLToPath(new URL('./children/fifo-source.cjs', import.meta.url))
const EXIT_MS = 5000 // the child exits at once; a pool thread stuck in read() never lets it

let dir
beforeAll(() => { dir = makeTempDir('zcopy-fifo-source-') })
afterAll(() => removeTempDir(dir))

function makeFifo (name) {
  const fifo = path.join(dir, name)
  execFileSync('mkfifo', [fifo])
  return fifo
}

describe.each(['file', 'fd', 'socket', 'writable'])('a silent FIFO piped to a %s, then aborted', (destination) => {
  test('rejects with ABORT_ERR, fs works meanwhile on a one-thread pool, and the process exits at once', async () => {
    const fifo = makeFifo(`silent-${destination}`)
    const small = path.join(dir, `small-${destination}.txt`)
    fs.writeFileSync(small, 'small\n')
    const child = spawn(process.execPath, [CHILD, fifo, destination, small], {
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk })
    const exited = once(child, 'exit')
    const lines = () => output.split('\n').filter(Boolean).map((line) => JSON.parse(line))
    // Wait for 'exiting', then give the exit EXIT_MS.
    const deadline = Date.now() + 20_000
    while (!lines().some((line) => line.exiting) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_MS)
    const [code, signal] = await exited
    clearTimeout(timer)
    const messages = lines()
    expect(messages.find((line) => 'readFile' in line)?.readFile).toBe('small\n')
    expect(messages.find((line) => line.settled)).toEqual({ settled: 'rejected', code: 'ABORT_ERR', name: 'AbortError' })
    expect(signal, 'the child had to be killed: process.exit() waited for a pool thread').toBe(null)
    expect(code).toBe(0)
  }, 40_000)
})

// A writer process that writes `data` into the FIFO, then closes it (EOF).
function feed (fifo, data) {
  const writer = spawn(process.execPath, ['-e', `
    const fs = require('fs'); const data = fs.readFileSync(0)
    const fd = fs.openSync(process.argv[1], 'w'); fs.writeSync(fd, data); fs.closeSync(fd)
  `, fifo], { stdio: ['pipe', 'inherit', 'inherit'] })
  writer.stdin.end(data)
  return once(writer, 'exit')
}

describe('a FIFO with a writer: every byte, then EOF', () => {
  const data = Buffer.alloc(5 * 1024 * 1024 + 13)
  for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i)

  test('to a file path, a caller fd, a socket and a Writable; no descriptor left', async () => {
    const before = openFdCount()
    // A path.
    const fifo1 = makeFifo('fed-path')
    const out = path.join(dir, 'fed-path.out')
    const [result] = await Promise.all([zcopy.pipeFile(fifo1, out), feed(fifo1, data)])
    expect(result.bytes).toBe(data.length)
    expect(sha256(fs.readFileSync(out))).toBe(sha256(data))
    // A caller's descriptor (the source) into a caller's descriptor.
    const fifo2 = makeFifo('fed-fd')
    const feeding = feed(fifo2, data)
    const source = await fs.promises.open(fifo2, 'r') // waits for the writer (on the pool, not the loop)
    const outFd = fs.openSync(path.join(dir, 'fed-fd.out'), 'w')
    expect((await zcopy.pipeFile(source.fd, outFd)).bytes).toBe(data.length)
    fs.closeSync(outFd)
    await source.close()
    await feeding
    expect(sha256(fs.readFileSync(path.join(dir, 'fed-fd.out')))).toBe(sha256(data))
    // A socket.
    const fifo3 = makeFifo('fed-socket')
    const received = []
    const server = net.createServer((socket) => socket.on('data', (chunk) => received.push(chunk)))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = net.connect(server.address().port, '127.0.0.1')
    await once(socket, 'connect')
    const [sent] = await Promise.all([zcopy.pipeFile(fifo3, socket), feed(fifo3, data)])
    expect(sent.bytes).toBe(data.length)
    socket.end()
    await new Promise((resolve) => { const check = () => Buffer.concat(received).length >= data.length ? resolve() : setTimeout(check, 10); check() })
    server.close()
    expect(sha256(Buffer.concat(received))).toBe(sha256(data))
    // A Writable that applies backpressure.
    const fifo4 = makeFifo('fed-writable')
    const chunks = []
    const slow = new Writable({ highWaterMark: 1024, write (chunk, encoding, callback) { chunks.push(chunk); setImmediate(callback) } })
    const [copied] = await Promise.all([zcopy.pipeFile(fifo4, slow), feed(fifo4, data)])
    expect(copied.bytes).toBe(data.length)
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(data))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(openFdCount()).toBe(before)
  }, 60_000)
})
