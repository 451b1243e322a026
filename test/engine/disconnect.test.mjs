// Receivers that vanish mid-transfer: every transfer rejects, nothing leaks.
import net from 'node:net'
import { once } from 'node:events'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { makeFile, fdsOpenedSince, makeTempDir, openFds, removeTempDir, sha256 } from '../support/files.mjs'
import { connect, drain } from '../support/net.mjs'

const ROUNDS = 1000
const CONCURRENCY = 16

let dir
let source
beforeAll(() => {
  dir = makeTempDir()
  source = makeFile(dir, 'source.bin', 8 * 1024 * 1024)
})
afterAll(() => removeTempDir(dir))

it(`${ROUNDS} receivers that reset or close mid-transfer: all reject, descriptors return`, async () => {
  const unhandled = []
  const onUnhandled = (err) => unhandled.push(err)
  process.on('unhandledRejection', onUnhandled)

  const outcomes = []
  const server = net.createServer((socket) => {
    socket.on('error', () => {})
    outcomes.push(zcopy.pipeFile(source.file, socket).then(
      () => { socket.end(); return 'resolved' },
      (err) => err.code
    ))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = server.address().port
  const before = openFds()

  async function receiver (round) {
    const socket = await connect(port)
    socket.on('error', () => {})
    await once(socket, 'data')
    if (round % 2 === 0) socket.resetAndDestroy()
    else socket.destroy()
    await once(socket, 'close')
  }

  for (let round = 0; round < ROUNDS; round += CONCURRENCY) {
    const batch = []
    for (let i = round; i < Math.min(round + CONCURRENCY, ROUNDS); i++) batch.push(receiver(i))
    await Promise.all(batch)
  }
  const results = await Promise.all(outcomes)
  expect(results).toHaveLength(ROUNDS)
  expect(results.filter((r) => r === 'resolved')).toEqual([])
  for (const code of new Set(results)) {
    expect(['EPIPE', 'ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']).toContain(code)
  }

  // Server sockets close asynchronously after destroy(); give them a moment.
  for (let i = 0; i < 50 && fdsOpenedSince(before).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(fdsOpenedSince(before)).toEqual([])

  // Still healthy: a full transfer on a fresh connection, byte-exact.
  const socket = await connect(port)
  expect(await drain(socket)).toEqual({ bytes: source.data.length, sha256: sha256(source.data) })
  expect(await outcomes.at(-1)).toBe('resolved')
  socket.destroy()

  process.off('unhandledRejection', onUnhandled)
  expect(unhandled).toEqual([])
  await new Promise((resolve) => server.close(resolve))
})
