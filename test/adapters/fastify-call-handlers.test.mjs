// reply.sendFile with per-call options or roots: each distinct set gets a zcopy
// handler (an open-file cache of its own). A route that varies them per request
// (a max-age computed per file, a root per tenant) must not grow descriptors
// without bound: past 32 such handlers the least recently used is closed.
import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopyFastify from 'zcopy/fastify'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const CALLS = 150
let root
beforeAll(() => {
  root = makeTempDir('zcopy-fastify-calls-')
  fs.writeFileSync(path.join(root, 'hello.txt'), 'hello\n')
  for (let i = 0; i < CALLS; i++) {
    fs.mkdirSync(path.join(root, `tenant-${i}`))
    fs.writeFileSync(path.join(root, `tenant-${i}`, 'hello.txt'), `tenant ${i}\n`)
  }
})
afterAll(() => removeTempDir(root))

const openFds = () => fs.readdirSync('/proc/self/fd').length

it.runIf(process.platform === 'linux')(`${CALLS} distinct per-call options and roots: every answer right, descriptors bounded, all closed with the app`, async () => {
  const app = Fastify()
  app.register(zcopyFastify, { root, serve: false })
  app.get('/age/:n', (request, reply) => reply.sendFile('hello.txt', { maxAge: Number(request.params.n) * 1000 }))
  app.get('/tenant/:n', (request, reply) => reply.sendFile('hello.txt', path.join(root, `tenant-${request.params.n}`)))
  await app.ready()
  const before = openFds()
  for (let n = 0; n < CALLS; n++) {
    const byAge = await app.inject(`/age/${n}`)
    expect(byAge.statusCode).toBe(200)
    expect(byAge.headers['cache-control']).toBe(`public, max-age=${n}`)
    const byRoot = await app.inject(`/tenant/${n}`)
    expect(byRoot.body).toBe(`tenant ${n}\n`)
  }
  // Each handler holds its root directory and the file: 2 × 300 without a bound.
  expect(openFds() - before).toBeLessThan(100)
  // A handler closed meanwhile works again when asked.
  expect((await app.inject('/age/0')).headers['cache-control']).toBe('public, max-age=0')
  await app.close()
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(openFds()).toBeLessThanOrEqual(before)
})
