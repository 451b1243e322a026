// A file tree and a plain node:http client for the adapter tests.
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

// → { status, headers, body: Buffer }, one connection per request.
export function request (port, pathname, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method, headers, agent: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
