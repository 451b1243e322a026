// On node:http and Express a status set before zcopy answers is kept, as send
// keeps it: `res.status(404)` then serving 404.html is a real Express pattern.
// Side by side with the real serve-static. (zcopy/koa is what resets Koa's
// preset 404; see koa.test.mjs.)
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import express from 'express'
import realServeStatic from 'serve-static'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from 'zcopy'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

let tree
const servers = []
beforeAll(() => {
  tree = makeTree()
  fs.writeFileSync(path.join(tree.root, '404.html'), '<h1>not here</h1>\n')
})
afterAll(() => {
  for (const server of servers) server.close()
  removeTempDir(tree.root)
})

async function appWith (serveStatic) {
  const app = express()
  const files = serveStatic(tree.root)
  app.use(files)
  app.use((req, res, next) => {
    res.status(404)
    req.url = '/404.html'
    files(req, res, next)
  })
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await once(server, 'listening')
  return server.address().port
}

it('res.status(404) then the 404 page: 404 with the page, never 304, as serve-static', async () => {
  const ports = { zcopy: await appWith(zcopy.serveStatic), serveStatic: await appWith(realServeStatic) }
  const answers = {}
  for (const [name, port] of Object.entries(ports)) {
    const page = await request(port, '/missing')
    const etag = page.headers.etag
    const conditional = await request(port, '/missing', { headers: { 'if-none-match': etag } })
    const head = await request(port, '/missing', { method: 'HEAD' })
    const found = await request(port, '/hello.txt')
    answers[name] = {
      page: [page.status, page.body.toString(), page.headers['content-type']],
      conditional: [conditional.status, conditional.body.toString()],
      head: [head.status, head.headers['content-length'], head.body.length],
      found: [found.status, found.body.toString()]
    }
  }
  expect(answers.zcopy).toEqual({
    page: [404, '<h1>not here</h1>\n', 'text/html; charset=utf-8'],
    conditional: [404, '<h1>not here</h1>\n'],
    head: [404, '18', 0],
    found: [200, 'hello, adapters\n']
  })
  expect(answers.zcopy).toEqual(answers.serveStatic)
})
