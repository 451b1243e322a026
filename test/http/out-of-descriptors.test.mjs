// A process out of descriptors (EMFILE) while a big file goes out: the addon
// sends what the socket takes at once from the caller's descriptors, then needs
// private copies of them to wait for the socket, and cannot make them. The rest
// goes through the socket's own writes: the client gets every byte (the build
// before sent the head and 256 KiB, then cut the connection).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import net from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'

const SERVER = new URL('./children/exhausting-server.mjs', import.meta.url).pathname
const SIZE = 8 * 1024 * 1024

let dir, expected
beforeAll(() => {
  dir = makeTempDir()
  expected = sha256(makeFile(dir, 'big.bin', SIZE).data)
})
afterAll(() => removeTempDir(dir))

function reply (child) {
  return once(child, 'message').then(([message]) => message)
}

// Requests on one kept-alive connection (its descriptor exists before the
// server runs out); each resolves with { status, body } once Content-Length
// bytes came, or with what came when the connection closed first.
function connection (port) {
  const socket = net.connect(port, '127.0.0.1')
  let buffered = Buffer.alloc(0)
  let pending = null
  const settle = () => {
    const end = buffered.indexOf('\r\n\r\n')
    if (pending === null || end < 0) return
    const head = buffered.subarray(0, end).toString('latin1')
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)[1])
    if (buffered.length - end - 4 < length && !socket.closed) return
    const body = buffered.subarray(end + 4, end + 4 + length)
    buffered = buffered.subarray(end + 4 + length)
    pending({ status: Number(head.split(' ')[1]), length, body })
    pending = null
  }
  socket.on('data', (chunk) => { buffered = Buffer.concat([buffered, chunk]); settle() })
  socket.on('close', settle)
  return {
    get (target) {
      return new Promise((resolve) => {
        pending = resolve
        socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      })
    },
    close: () => socket.destroy()
  }
}

test('a big file goes out whole when the process is out of descriptors', async () => {
  // A limit of 1024, as many systems' default, so that running out is quick.
  const child = spawn('/bin/sh', ['-c', 'ulimit -n 1024 && exec "$0" "$@"', process.execPath, SERVER, dir],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    const { port } = await reply(child)
    const client = connection(port)
    const first = await client.get('/big.bin') // opens the file and keeps it open
    expect(first.status).toBe(200)
    expect(sha256(first.body)).toBe(expected)

    child.send({ cmd: 'exhaust' })
    expect((await reply(child)).opened).toBeGreaterThan(0)
    for (let i = 0; i < 3; i++) {
      const starved = await client.get('/big.bin')
      expect(starved.status).toBe(200)
      expect(starved.body.length).toBe(SIZE)
      expect(sha256(starved.body)).toBe(expected)
    }
    child.send({ cmd: 'release' })
    await reply(child)
    const after = await client.get('/big.bin')
    expect(sha256(after.body)).toBe(expected)
    client.close()
  } finally {
    child.kill()
  }
})
