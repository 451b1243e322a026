// What reply.sendFile (and a request path that takes the plugin's long way: a
// '%' in it) costs in thread-pool round trips, counted with async_hooks around
// real requests to a real Fastify server. With the addon a file not yet open
// is one job: its name's stat, the root's name's stat and the open beneath the
// root (it was three: the plugin's stat, then the handler's root check and
// open). A file the handler has open is one stat.
import { createHook } from 'node:async_hooks'
import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from 'zcopy'
import zcopyFastify from 'zcopy/fastify'
import { fdsUnder, request } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const native = zcopy.zeroCopyAvailable
// A miss's lookup and open: one job with the addon; without it the name's stat,
// the root's name's stat and fs.open.
const MISS = native ? 1 : 3
// The body's read: the fallback sends it through the response.
const BODY = native ? 0 : 1
const POOL_JOBS = new Set(['FSREQCALLBACK', 'ZcopyLookupBeneath', 'ZcopyOpenBeneath'])

let root
beforeAll(() => {
  root = fs.realpathSync(makeTempDir('zcopy-fastify-misses-'))
  fs.mkdirSync(path.join(root, 'd'))
  for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(root, 'd', `f ${i}.txt`), `file ${i}\n`)
})
afterAll(() => removeTempDir(root))

// The pool round trips of one GET of `urlPath`, checked for its body.
async function poolJobsOf (port, urlPath, body) {
  let count = 0
  const hook = createHook({ init (id, type) { if (POOL_JOBS.has(type)) count++ } }).enable()
  let res
  try {
    res = await request(port, urlPath)
  } finally {
    hook.disable()
  }
  expect(res.status).toBe(200)
  expect(res.body.toString()).toBe(body)
  return count
}

test('reply.sendFile and the long way: a miss is one pool job, a file open already one stat; one descriptor per file', async () => {
  const app = Fastify()
  await app.register(zcopyFastify, { root, memoryCache: 0 })
  app.get('/send/:n', (request, reply) => reply.sendFile(`d/f ${request.params.n}.txt`))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = app.server.address().port
  try {
    // The first request opens the root directory (its proof), looked up the long way.
    await poolJobsOf(port, '/send/0', 'file 0\n')
    for (const n of [1, 2, 3]) {
      expect(await poolJobsOf(port, `/send/${n}`, `file ${n}\n`)).toBe(MISS + BODY)
      expect(await poolJobsOf(port, `/send/${n}`, `file ${n}\n`)).toBe(1 + BODY)
    }
    // '%' in the path: the plugin's own lookup, as sendFile's, and its check of
    // the path's spelling (each segment's other case stat'ed: 'D', 'F 4.TXT').
    expect(await poolJobsOf(port, '/d/f%204.txt', 'file 4\n')).toBe(MISS + 2 + BODY)
    expect(await poolJobsOf(port, '/d/f%204.txt', 'file 4\n')).toBe(1 + 2 + BODY)
    // Asked for at once, a file not yet open is opened once each and kept once.
    const answers = await Promise.all(Array.from({ length: 8 }, () => request(port, '/send/5')))
    expect(answers.map((res) => res.body.toString())).toEqual(Array(8).fill('file 5\n'))
    expect(fdsUnder(path.join(root, 'd'))).toHaveLength(6)
  } finally {
    await app.close()
  }
  expect(fdsUnder(root)).toEqual([])
})
