// zcopy serve --http2 against clients that open many streams and never let
// their bodies move (issue 62.4): at most 128 streams per session, as nginx,
// and a session whose bodies move less than a piece (16 KiB) in --timeout is
// destroyed, whatever frames its client sends.
import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import http2 from 'node:http2'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { makeRoot, startServe } from './serve-helpers.mjs'

const cert = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const key = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const ca = fs.readFileSync(cert)
const BIG = 4 * 1024 * 1024
const MEDIUM = 1024 * 1024
const root = makeRoot({ 'big.bin': Buffer.alloc(BIG, 'b'), 'medium.bin': Buffer.alloc(MEDIUM, 'm') })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const H2 = ['--quiet', '--http2', '--ssl-cert', cert, '--ssl-key', key]

// A session whose streams get no byte of DATA: SETTINGS_INITIAL_WINDOW_SIZE 0.
async function zeroWindowSession (url, options = {}) {
  const session = http2.connect(url, { ca, settings: { initialWindowSize: 0 }, ...options })
  session.on('error', () => {})
  await once(session, 'remoteSettings')
  return session
}

// Opens `count` streams for /big.bin; → their states, { responded, closed }.
function openStreams (session, count, path = '/big.bin') {
  return Array.from({ length: count }, () => {
    const state = { responded: false, closed: false, rstCode: null, bytes: 0 }
    const stream = session.request({ ':path': path })
    stream.on('error', () => {})
    stream.on('response', () => { state.responded = true })
    stream.on('data', (chunk) => { state.bytes += chunk.length })
    stream.on('close', () => {
      state.closed = true
      state.rstCode = stream.rstCode
    })
    state.stream = stream
    return state
  })
}

async function until (condition, ms) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

describe('zcopy serve --http2', () => {
  test('at most 128 streams of a session are open at once', async () => {
    const server = await startServe(root, H2)
    const session = await zeroWindowSession(server.url)
    try {
      expect(session.remoteSettings.maxConcurrentStreams).toBe(128)
      // The client's nghttp2 holds the streams beyond the server's limit.
      const streams = openStreams(session, 200)
      expect(await until(() => streams.filter((s) => s.responded).length >= 128, 20000)).toBe(true)
      // Time for any stream beyond the limit to be answered, if it could be.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(streams.filter((s) => s.responded)).toHaveLength(128)
      expect(streams.filter((s) => s.bytes > 0)).toHaveLength(0)
    } finally {
      session.destroy()
      await server.stop()
    }
  }, 60000)

  // Every 200 ms a PING (Node re-arms its session timeout on each) and one
  // more byte of the connection's window (none for any stream); or 100 PINGs
  // every 100 ms, whose answers alone are more than 16 KiB per --timeout.
  const FRAMES = {
    trickle: { every: 200, pings: 1, windowUpdate: true },
    'PING flood': { every: 100, pings: 100, windowUpdate: false }
  }
  test.each(Object.keys(FRAMES))('a session whose streams move no byte is destroyed after --timeout, whatever frames its client sends (%s)', async (name) => {
    const { every, pings, windowUpdate } = FRAMES[name]
    const server = await startServe(root, [...H2, '--timeout', '2'])
    const session = await zeroWindowSession(server.url, { maxOutstandingPings: 10_000 })
    let closed = false
    session.once('close', () => { closed = true })
    const streams = openStreams(session, 20)
    let window = 65535
    let answered = 0
    const frames = setInterval(() => {
      if (session.destroyed) return
      for (let i = 0; i < pings; i++) session.ping((err) => { if (!err) answered++ })
      if (windowUpdate) session.setLocalWindowSize(++window)
    }, every)
    try {
      expect(await until(() => streams.every((s) => s.responded), 20000)).toBe(true)
      const started = Date.now()
      expect(await until(() => closed, 30000)).toBe(true)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1500)
      expect(answered).toBeGreaterThan(0)
      expect(streams.filter((s) => s.bytes > 0)).toHaveLength(0)
    } finally {
      clearInterval(frames)
      session.destroy()
      await server.stop()
    }
  }, 60000)

  test('a slow download keeps its connection past the timeout, a stalled stream beside it; once it is done, the connection is cut', async () => {
    const server = await startServe(root, [...H2, '--timeout', '2'])
    const session = http2.connect(server.url, { ca })
    session.on('error', () => {})
    let closed = false
    session.once('close', () => { closed = true })
    await once(session, 'connect')
    // Room for both at the connection level: what the paused stream holds
    // must not shut the other one's window.
    session.setLocalWindowSize(16 * 1024 * 1024)
    try {
      // Asked twice, /medium.bin is hot (kept in memory).
      for (let i = 0; i < 2; i++) {
        const [warm] = openStreams(session, 1, '/medium.bin')
        expect(await until(() => warm.closed, 20000)).toBe(true)
        expect(warm.bytes).toBe(MEDIUM)
      }
      const [stalled] = openStreams(session, 1)
      const [moving] = openStreams(session, 1, '/medium.bin')
      stalled.stream.pause() // its window stays shut once the first 64 KiB are in
      // The other one read slowly: a 50 ms pause after each chunk (~150 KiB/s
      // here: 1 MiB in several times the timeout).
      const started = Date.now()
      moving.stream.on('data', () => {
        moving.stream.pause()
        setTimeout(() => moving.stream.resume(), 50)
      })
      expect(await until(() => moving.closed, 60000)).toBe(true)
      expect(moving.bytes).toBe(MEDIUM)
      expect(Date.now() - started).toBeGreaterThan(2000)
      expect(closed).toBe(false)
      expect(await until(() => closed, 30000)).toBe(true)
      expect(stalled.bytes).toBeLessThan(BIG)
    } finally {
      session.destroy()
      await server.stop()
    }
  }, 120000)
})
