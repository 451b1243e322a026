import { afterAll, beforeAll, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

// Every Node server of the HTTP benchmark (bench/http/server.js), started as the
// benchmark starts it, answers a file with its bytes: a figure measured on a
// server that sends the wrong body, or none, would be wrong.
const { KINDS, startServer } = createRequire(import.meta.url)('../../bench/http/server.js')

// The six headers zcopy sends, which the header floors send too (the peers keep
// their own defaults: sirv's has no Cache-Control).
const STATIC_HEADERS = ['content-type', 'content-length', 'last-modified', 'etag', 'cache-control', 'accept-ranges']
const sendsStaticHeaders = (kind) => /^(zcopy|headers floor|static floor)/.test(kind)

let root
const content = crypto.randomBytes(4096)

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-bench-servers-'))
  fs.writeFileSync(path.join(root, 'a.bin'), content)
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

test.each(KINDS)('%s answers a 4 KiB file byte-exact', async (kind) => {
  const server = await startServer(kind, root)
  try {
    for (let request = 0; request < 2; request++) { // the first fills a per-path cache, the second reads it
      const response = await fetch(`http://127.0.0.1:${server.port}/a.bin`)
      expect(response.status).toBe(200)
      expect(Buffer.from(await response.arrayBuffer()).equals(content)).toBe(true)
      expect(response.headers.get('content-length')).toBe('4096')
      const expected = sendsStaticHeaders(kind) ? STATIC_HEADERS : ['content-type']
      for (const name of expected) expect(response.headers.has(name), name).toBe(true)
    }
  } finally {
    await server.stop()
  }
}, 20_000)
