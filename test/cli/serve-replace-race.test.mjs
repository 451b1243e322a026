// A file replaced (a new version renamed over it) and then asked for at once
// gets the new version, never the remembered old one, with compression on. The
// server's event loop may read the request before the folder watch's event:
// epoll reports a socket that was ready in the previous turn ahead of the
// inotify queue, and the server is busier with compression on. So before a
// remembered entry answers, lib/http/files/remembered-paths.js asks whether watch
// events wait unread (the addon: FIONREAD on the loop's inotify queue; without
// it, an fstat of the entry's descriptor), and the name is looked up if so.
// Before that (`zcopy serve`, compression on by default), 1 MB files replaced
// 300 times with other clients loading the server got 4-13 old answers per run
// (compression off: 0 of 150).
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { describe, expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'

const CHANGES = 300
const SIZE = 1_000_000

// Version `i` of the file: its number at both ends, text between.
function version (i) {
  const tag = `// version ${i}\n`
  return tag + 'const x = 1;\n'.repeat(Math.floor((SIZE - 2 * tag.length) / 13)) + tag
}

function get (origin, agent, encoding) {
  return new Promise((resolve, reject) => {
    http.get(new URL('/app.js', origin), { agent, headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        const coding = res.headers['content-encoding']
        resolve(coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body)
      })
      res.on('error', reject)
    }).on('error', reject)
  })
}

// The addon's check, and without it (ZCOPY_NATIVE=0) the fstat per hit.
describe.each([['with the addon', {}], ['without it', { ZCOPY_NATIVE: '0' }]])('%s', (name, env) => {
  test('a request sent once a replace is done never gets the old file or its variants', async () => {
    const root = makeRoot({ 'load.js': 'y'.repeat(5000), 'app.js': version(0) })
    const served = await startServe(root, [], { env })
    const origin = served.url
    const agents = ['br', 'gzip', 'identity'].map((encoding) => ({ encoding, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) }))
    // Other clients keep the server busy meanwhile.
    let loading = true
    const loaders = Array.from({ length: 4 }, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      while (loading) {
        await new Promise((resolve) => http.get(new URL('/load.js', origin), { agent, headers: { 'accept-encoding': 'br' } }, (res) => {
          res.resume()
          res.on('end', resolve)
        }).on('error', resolve))
      }
      agent.destroy()
    })
    const old = []
    try {
      for (let i = 1; i <= CHANGES; i++) {
        for (let k = 0; k < 3; k++) await Promise.all(agents.map(({ agent, encoding }) => get(origin, agent, encoding)))
        const next = join(root, 'app.js.next')
        writeFileSync(next, version(i))
        renameSync(next, join(root, 'app.js'))
        const bodies = await Promise.all(agents.map(({ agent, encoding }) => get(origin, agent, encoding)))
        bodies.forEach((body, at) => {
          const first = body.subarray(0, 40).toString().split('\n')[0]
          if (first !== `// version ${i}`) old.push(`change ${i}, ${agents[at].encoding}: ${first}`)
        })
      }
    } finally {
      loading = false
      await Promise.all(loaders)
      for (const { agent } of agents) agent.destroy()
      await served.stop()
      rmSync(root, { recursive: true, force: true })
    }
    expect(old).toEqual([])
  }, 180_000)
})
