// zcopy serve's access log against a hostile HTTP/2 :path (issue 62.10):
// nghttp2 lets bytes 0x80-0xFF through, and Node gives them to the request as
// latin1 characters; U+0085 (NEL) ends a line for tools that split on it, U+009B
// is a terminal's CSI. Both log formats write them as nginx does: \x85.
import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import http2 from 'node:http2'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { makeRoot, startServe } from './serve-helpers.mjs'

const cert = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const key = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const root = makeRoot({ 'a.txt': 'a' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// A :path with a NEL, a CSI sequence, a UTF-8 é sent raw and a backslash (the
// client sends each character as one byte; nghttp2 refuses a space or a C0
// control in :path).
const HOSTILE = '/a\u0085GET\u009b31m\u00c3\u00a9\\x85'
const ESCAPED = '/a\\x85GET\\x9B31m\\xC3\\xA9\\x5Cx85'

async function h2Status (origin, path) {
  const session = http2.connect(origin, { ca: fs.readFileSync(cert) })
  try {
    const stream = session.request({ ':path': path })
    stream.resume()
    const [headers] = await once(stream, 'response')
    await once(stream, 'end')
    return headers[':status']
  } finally {
    session.close()
  }
}

describe.each([['text', []], ['json', ['--log', 'json']]])('zcopy serve --http2, %s log', (format, args) => {
  test('bytes 0x80-0xFF and the backslash in :path are written \\xHH, never raw', async () => {
    const server = await startServe(root, ['--http2', '--ssl-cert', cert, '--ssl-key', key, ...args], { env: { NO_COLOR: '1' } })
    let output
    try {
      expect(await h2Status(server.url.replace(/\/$/, ''), HOSTILE)).toBe(404)
      expect(await h2Status(server.url.replace(/\/$/, ''), '/a.txt')).toBe(200)
    } finally {
      output = await server.stop()
    }
    expect(output.stdout).not.toMatch(/[\u0080-\u009f]/)
    const lines = output.stdout.split('\n').filter((line) => line.includes('/a'))
    expect(lines).toHaveLength(2)
    if (format === 'text') {
      expect(lines[0]).toMatch(/^GET \/a\\x85GET\\x9B31m\\xC3\\xA9\\x5Cx85 404 \d+ B /)
      expect(lines[1]).toMatch(/^GET \/a\.txt 200 1 B /)
    } else {
      expect(JSON.parse(lines[0])).toMatchObject({ method: 'GET', path: ESCAPED, status: 404 })
      expect(lines[0]).toContain('"path":"/a\\\\x85GET')
      expect(JSON.parse(lines[1])).toMatchObject({ path: '/a.txt', status: 200 })
    }
  }, 30000)
})
