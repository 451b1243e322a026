// A file tree, a plain node:http client and a client that hangs up, for the adapter tests.
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { makeFile, makeTempDir } from '../support/files.mjs'

export function makeTree () {
  const root = makeTempDir('zcopy-adapters-')
  const big = makeFile(root, 'big.bin', 3 * 1024 * 1024 + 7).data
  fs.writeFileSync(path.join(root, 'hello.txt'), 'hello, adapters\n')
  fs.writeFileSync(path.join(root, '.secret'), 'dotfile\n')
  fs.mkdirSync(path.join(root, 'dir'))
  fs.writeFileSync(path.join(root, 'dir', 'index.html'), '<p>index</p>\n')
  fs.mkdirSync(path.join(root, 'other'))
  fs.writeFileSync(path.join(root, 'other', 'page.html'), '<p>other</p>\n')
  return { root, big }
}

// One request, one connection: the HTTP tests' client.
export { request } from '../fixtures/http/net.mjs'

// Reads a few bytes of `urlPath`'s body, then destroys the connection. → its status.
export async function cutAfterFirstBytes (port, urlPath, headers = {}) {
  const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers, agent: false })
  const [res] = await once(req, 'response')
  await once(res, 'data')
  req.destroy()
  return res.statusCode
}
