// fastify.close() right after a zcopy response was read: the engine may report
// the transfer done (and the response end) only after the client has the last
// byte and the server was told to close. The connection, kept alive by the
// client, must not be left open then: close() would wait for the client.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopyFastify from 'zcopy/fastify'
import { removeTempDir } from '../support/files.mjs'
import { makeTree } from './helpers.mjs'

let tree
beforeAll(() => {
  tree = makeTree()
  fs.writeFileSync(path.join(tree.root, 'mid.bin'), Buffer.alloc(256 * 1024, 7))
})
afterAll(() => removeTempDir(tree.root))

function get (agent, port, file) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: file, agent }, (res) => {
      let bytes = 0
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('end', () => resolve({ status: res.statusCode, bytes }))
      res.on('error', reject)
    }).on('error', reject)
  })
}

const STUCK = Symbol('stuck')

it('close() finishes after a response read over a kept-alive connection, every time', async () => {
  for (let i = 0; i < 60; i++) {
    const app = Fastify()
    app.register(zcopyFastify, { root: tree.root })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const agent = new http.Agent({ keepAlive: true })
    const files = ['/mid.bin', '/hello.txt', '/big.bin']
    const res = await get(agent, app.server.address().port, files[i % files.length])
    expect(res.status).toBe(200)
    let timer
    const closed = await Promise.race([
      app.close(),
      new Promise((resolve) => { timer = setTimeout(resolve, 10000, STUCK) })
    ])
    clearTimeout(timer)
    agent.destroy()
    expect(closed, `close() still waiting for the kept-alive connection after try ${i}`).not.toBe(STUCK)
  }
}, 120000)
