// options.onReplayable (zcopy serve's native lane): it hears exactly the
// answers that depend only on the request's method, target, Host,
// Accept-Encoding, If-None-Match and If-Modified-Since, with the cache entry's
// descriptor and stat (and the source's, for a sibling or a variant), and its
// whenDropped() listener runs once the cache drops a file the answer was made
// of, or the store its variant.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'

let root
let server
const heard = []
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-replayable-'))
  fs.writeFileSync(path.join(root, 'a.bin'), Buffer.alloc(5000, 'a'))
  fs.writeFileSync(path.join(root, 'b.bin'), Buffer.alloc(10, 'b'))
  fs.writeFileSync(path.join(root, 'app.js'), 'export const answer = 42\n'.repeat(50))
  fs.writeFileSync(path.join(root, 'app.js.br'), Buffer.alloc(40, 'r'))
  const serve = zcopy.serveStatic(root, {
    compress: false,
    precompressed: true,
    onReplayable: (req, res, answer) => {
      const size = answer.fd === null ? answer.bytes.length : fs.fstatSync(answer.fd).size // valid during the call
      const source = answer.source === null ? null : fs.fstatSync(answer.source.fd).size
      heard.push({ method: req.method, url: req.url, status: res.statusCode, size, statSize: answer.stat.size, source, encoding: res.getHeader('content-encoding') ?? null, answer })
    }
  })
  server = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
})
afterAll(async () => {
  await server.close()
  fs.rmSync(root, { recursive: true, force: true })
})

// What was heard for a request: the call comes once the body is sent, so a
// request that is heard (a plain GET of a.bin) follows it, and is waited for.
async function heardFor (path, options) {
  heard.length = 0
  const response = await request(server.port, path, options)
  await request(server.port, '/a.bin?marker')
  for (let i = 0; i < 2000 && !heard.some(({ url }) => url === '/a.bin?marker'); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  const own = heard.filter(({ url }) => url !== '/a.bin?marker')
  return { response, heard: own.map(({ answer, ...rest }) => rest), answers: own.map(({ answer }) => answer) }
}

const file = { size: 5000, statSize: 5000, source: null, encoding: null }

it('hears a whole 200 of a GET and of a HEAD, with the descriptor and stat of the file', async () => {
  expect((await heardFor('/a.bin')).heard).toEqual([{ method: 'GET', url: '/a.bin', status: 200, ...file }])
  expect((await heardFor('/a.bin', { method: 'HEAD' })).heard).toEqual([{ method: 'HEAD', url: '/a.bin', status: 200, ...file }])
})

it('hears a 304 to If-None-Match or If-Modified-Since, and the 200 to a tag that does not match', async () => {
  const { etag, 'last-modified': lastModified } = (await request(server.port, '/a.bin')).headers
  for (const headers of [{ 'if-none-match': etag }, { 'if-none-match': `"other", ${etag}` }, { 'if-none-match': '*' }, { 'if-modified-since': lastModified }]) {
    expect((await heardFor('/a.bin', { headers })).heard, JSON.stringify(headers)).toEqual([{ method: 'GET', url: '/a.bin', status: 304, ...file }])
  }
  expect((await heardFor('/a.bin', { method: 'HEAD', headers: { 'if-none-match': etag } })).heard).toEqual([{ method: 'HEAD', url: '/a.bin', status: 304, ...file }])
  expect((await heardFor('/a.bin', { headers: { 'if-none-match': '"x"' } })).heard).toEqual([{ method: 'GET', url: '/a.bin', status: 200, ...file }])
})

it('hears a precompressed sibling once the cache keeps the siblings with the file, with the file as its source', async () => {
  const headers = { 'accept-encoding': 'br' }
  let heard = []
  for (let i = 0; i < 50 && heard.length === 0; i++) heard = (await heardFor('/app.js', { headers })).heard
  expect(heard).toEqual([{ method: 'GET', url: '/app.js', status: 200, size: 40, statSize: 40, source: 50 * 25, encoding: 'br' }])
})

it('hears a 206 of one range of the file, with the range', async () => {
  for (const [range, start, end] of [['bytes=0-9', 0, 9], ['bytes=4990-', 4990, 4999], ['bytes=-5', 4995, 4999]]) {
    const { heard, answers } = await heardFor('/a.bin', { headers: { range } })
    expect(heard, range).toEqual([{ method: 'GET', url: '/a.bin', status: 206, ...file }])
    expect(answers[0].range).toEqual({ start, end })
    expect(answers[0].bytes).toBe(null) // sent from the descriptor
  }
  expect((await heardFor('/a.bin')).answers[0].range).toBe(null)
})

it('hears no answer to another condition or to several ranges, and no 416, 412 or 404', async () => {
  for (const headers of [{ range: 'bytes=0-1,5-6' }, { range: 'bytes=9999-' }, { 'if-match': '*' }, { 'if-match': '"x"' }, { 'if-range': '"x"' }, { 'if-unmodified-since': new Date().toUTCString() }, { range: 'bytes=0-9', 'if-range': '"x"' }, { 'if-none-match': '"x"', 'cache-control': 'max-age=0' }, { 'if-modified-since': new Date().toUTCString(), 'cache-control': 'no-cache' }]) {
    const { response, heard } = await heardFor('/a.bin', { headers })
    expect(response.status).toBeGreaterThan(0)
    expect(heard, JSON.stringify(headers)).toEqual([])
  }
  expect((await heardFor('/nope.bin')).heard).toEqual([])
})

it('whenDropped: the listener runs once the cache drops the file (here: it changed)', async () => {
  const { answers } = await heardFor('/b.bin')
  let dropped = 0
  answers[0].whenDropped(() => { dropped++ })
  expect(dropped).toBe(0)
  fs.writeFileSync(path.join(root, 'b.bin'), 'changed, longer\n')
  for (let i = 0; i < 400 && dropped === 0; i++) {
    await request(server.port, '/b.bin')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  expect(dropped).toBe(1)
  answers[0].whenDropped(() => { dropped++ }) // gone already: at once
  expect(dropped).toBe(2)
})

it('hears a compressed variant once made (in memory or in a file), with the file as its source; dropped when the file changes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-replayable-variants-'))
  const big = crypto.randomBytes(150 * 1024).toString('hex') // its gzip is larger than the 64 KiB kept in memory
  fs.writeFileSync(path.join(dir, 'small.js'), 'export const answer = 42\n'.repeat(400))
  fs.writeFileSync(path.join(dir, 'big.js'), big)
  const variants = []
  const serve = zcopy.serveStatic(dir, {
    compress: { encodings: ['gzip'] },
    onReplayable: (req, res, answer) => {
      const source = fs.fstatSync(answer.source.fd).size
      variants.push({ url: req.url, encoding: res.getHeader('content-encoding'), inMemory: answer.fd === null, size: answer.fd === null ? answer.bytes.length : fs.fstatSync(answer.fd).size, source, answer })
    }
  })
  const served = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  try {
    const headers = { 'accept-encoding': 'gzip' }
    for (const name of ['/small.js', '/big.js']) {
      expect((await request(served.port, name, { headers })).headers['content-encoding']).toBeUndefined() // the variant is being made
      await serve.compressed()
      const response = await request(served.port, name, { headers })
      expect(response.headers['content-encoding']).toBe('gzip')
      expect(variants.map(({ answer, ...rest }) => rest).at(-1)).toEqual({ url: name, encoding: 'gzip', inMemory: name === '/small.js', size: response.body.length, source: fs.statSync(path.join(dir, name)).size })
    }
    expect(variants.length).toBe(2)
    const dropped = []
    for (const { url, answer } of variants) answer.whenDropped(() => dropped.push(url))
    fs.writeFileSync(path.join(dir, 'small.js'), 'export const answer = 43\n'.repeat(400))
    fs.writeFileSync(path.join(dir, 'big.js'), big.toUpperCase())
    for (let i = 0; i < 400 && dropped.length < 2; i++) {
      await request(served.port, '/small.js', { headers })
      await request(served.port, '/big.js', { headers })
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(dropped.sort()).toEqual(['/big.js', '/small.js'])
  } finally {
    await served.close()
    await serve.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
