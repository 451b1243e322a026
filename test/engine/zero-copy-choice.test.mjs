// The engine's one choice for a response-like destination (movesByZeroCopy,
// lib/engine/destination.js): sendfile to the connection's socket only when the
// addon loaded and the layer above says nothing stands between the body and a
// plain socket; a copy through the destination's own writes otherwise. Asked
// of a real TCP connection and of a stand-in that is not a socket.
import net from 'node:net'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { movesByZeroCopy, zeroCopyAvailable } from '../../lib/engine/index.js'

let server
let socket
beforeAll(async () => {
  server = net.createServer((peer) => peer.resume())
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  socket = net.connect(server.address().port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
})
afterAll(async () => {
  socket.destroy()
  await new Promise((resolve) => server.close(resolve))
})

// A plain HTTP/1.x response on its own socket, as the HTTP layer describes it.
const plain = () => ({ socket, encrypted: false, multiplexed: false, passesThrough: true, framed: false })

describe('movesByZeroCopy', () => {
  it('sends a plain socket’s body by sendfile where the addon loaded', () => {
    expect(movesByZeroCopy(plain())).toBe(zeroCopyAvailable)
  })

  it('sends by sendfile once a response still waiting for its socket has one', () => {
    expect(movesByZeroCopy({ ...plain(), socket: null })).toBe(zeroCopyAvailable)
  })

  it('copies over TLS, HTTP/2, through writes that may transform, and with framing of its own', () => {
    expect(movesByZeroCopy({ ...plain(), encrypted: true })).toBe(false)
    expect(movesByZeroCopy({ ...plain(), multiplexed: true })).toBe(false)
    expect(movesByZeroCopy({ ...plain(), passesThrough: false })).toBe(false)
    expect(movesByZeroCopy({ ...plain(), framed: true })).toBe(false)
  })

  it('copies to a stand-in that is not a socket (a framework’s own stream)', () => {
    expect(movesByZeroCopy({ ...plain(), socket: new PassThrough() })).toBe(false)
  })
})
