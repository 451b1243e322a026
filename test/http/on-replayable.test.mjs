// options.onReplayable (zcopy serve's native lane): it hears exactly the
// answers that depend only on the request's method, target, Host and
// Accept-Encoding, with the cache entry's descriptor and stat, and its
// whenDropped() listener runs once the cache drops the file.
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
  const serve = zcopy.serveStatic(root, {
    compress: false,
    precompressed: true,
    onReplayable: (req, res, answer) => {
      const { size } = fs.fstatSync(answer.fd) // valid during the call
      heard.push({ method: req.method, url: req.url, status: res.statusCode, size, statSize: answer.stat.size, answer })
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

it('hears a whole 200 of a GET and of a HEAD, with the descriptor and stat of the file', async () => {
  expect((await heardFor('/a.bin')).heard).toEqual([{ method: 'GET', url: '/a.bin', status: 200, size: 5000, statSize: 5000 }])
  expect((await heardFor('/a.bin', { method: 'HEAD' })).heard).toEqual([{ method: 'HEAD', url: '/a.bin', status: 200, size: 5000, statSize: 5000 }])
})

it('hears no answer to a Range or a condition, and no 304, 206 or 404', async () => {
  for (const headers of [{ range: 'bytes=0-9' }, { 'if-none-match': '"x"' }, { 'if-modified-since': new Date().toUTCString() }, { 'if-match': '*' }, { 'if-range': '"x"' }, { 'if-unmodified-since': new Date().toUTCString() }]) {
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
