// A file tree, a plain node:http client, a client that hangs up and a check of a
// compressed answer, for the adapter tests.
import { once } from 'node:events'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import zlib from 'node:zlib'
import { expect } from 'vitest'
import { request } from '../support/http.mjs'
import { makeTempDir } from '../support/files.mjs'

export function makeTree () {
  const root = makeTempDir('zcopy-adapters-')
  // Random bytes but the first, 0: no gzip or zlib stream starts so.
  // @fastify/compress sends a body that starts like one as it is (taken for
  // compressed already), and about one random file in a thousand does
  // (1/16 × 1/2 × 1/31): every compressed answer of that run undecodable.
  const big = crypto.randomBytes(3 * 1024 * 1024 + 7)
  big[0] = 0
  fs.writeFileSync(path.join(root, 'big.bin'), big)
  fs.writeFileSync(path.join(root, 'hello.txt'), 'hello, adapters\n')
  fs.writeFileSync(path.join(root, '.secret'), 'dotfile\n')
  fs.mkdirSync(path.join(root, 'dir'))
  fs.writeFileSync(path.join(root, 'dir', 'index.html'), '<p>index</p>\n')
  fs.mkdirSync(path.join(root, 'other'))
  fs.writeFileSync(path.join(root, 'other', 'page.html'), '<p>other</p>\n')
  return { root, big }
}

// One request, one connection: the HTTP tests' client.
export { request }

// Reads a few bytes of `urlPath`'s body, then destroys the connection. → its status.
export async function cutAfterFirstBytes (port, urlPath, headers = {}) {
  const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers, agent: false })
  const [res] = await once(req, 'response')
  await once(res, 'data')
  req.destroy()
  return res.statusCode
}

const DECODE = { gzip: zlib.gunzipSync, deflate: zlib.inflateSync, br: zlib.brotliDecompressSync }

// Asks for `urlPath` in `coding`: a 200 in that coding, without the file's
// Content-Length, that decodes to `data`.
export async function expectCompressedFile (port, urlPath, coding, data) {
  const res = await request(port, urlPath, { headers: { 'accept-encoding': coding } })
  expect(res.status).toBe(200)
  expect(res.headers['content-encoding']).toBe(coding)
  expect(res.headers['content-length']).toBeUndefined()
  expect(DECODE[coding](res.body).equals(data)).toBe(true)
}
