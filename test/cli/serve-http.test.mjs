import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import zlib from 'node:zlib'
import { makeRoot, startServe } from './serve-helpers.mjs'

const appJs = 'console.log("app")\n'
const root = makeRoot({
  'index.html': '<h1>app</h1>\n',
  '404.html': '<h1>not here</h1>\n',
  'about.html': '<h1>about</h1>\n',
  'app.js': appJs,
  'app.js.br': zlib.brotliCompressSync(appJs),
  'app.js.gz': zlib.gzipSync(appJs),
  'main.3f2a1b9c.js': 'hashed\n',
  'index-BQxKfTda.js': 'hashed too\n',
  '.env': 'SECRET=1\n',
  'docs/readme.txt': 'docs\n'
})
let plain
let tuned
beforeAll(async () => {
  [plain, tuned] = await Promise.all([
    startServe(root, []),
    startServe(root, ['--single', '--cors', '--max-age', '1h', '--immutable', '--no-etag', '--dotfiles', 'allow', '--precompressed', '--extensions', 'html'])
  ])
})
afterAll(async () => {
  await Promise.all([plain, tuned].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

const get = async (server, path, init) => {
  const response = await fetch(new URL(path, server.url), init)
  return { status: response.status, headers: response.headers, body: await response.text() }
}

describe('zcopy serve: what each flag changes', () => {
  test('defaults: 404.html for a miss, no CORS, max-age=0, ETag, dotfiles ignored, no extensions, no precompressed', async () => {
    const missing = await get(plain, '/nope')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/)
    expect(missing.body).toBe('<h1>not here</h1>\n')
    const js = await get(plain, '/app.js', { headers: { 'accept-encoding': 'br, gzip' } })
    expect(js.body).toBe(appJs)
    expect(js.headers.get('content-encoding')).toBe(null)
    expect(js.headers.get('access-control-allow-origin')).toBe(null)
    expect(js.headers.get('cache-control')).toBe('public, max-age=0')
    expect(js.headers.get('etag')).toMatch(/^W\/"/)
    expect((await get(plain, '/.env')).status).toBe(404)
    expect((await get(plain, '/about')).status).toBe(404)
    expect((await get(plain, '/main.3f2a1b9c.js')).headers.get('cache-control')).toBe('public, max-age=0')
    expect((await get(plain, '/app.js', { method: 'POST' })).status).toBe(405)
  })

  test('--single: unknown paths get index.html, assets with an extension still 404', async () => {
    for (const path of ['/', '/dashboard', '/users/42/edit?tab=1']) {
      const page = await get(tuned, path)
      expect(page.status).toBe(200)
      expect(page.body).toBe('<h1>app</h1>\n')
    }
    const asset = await get(tuned, '/missing.js')
    expect(asset.status).toBe(404)
    expect(asset.body).toBe('<h1>not here</h1>\n')
  })

  test('--extensions html: /about is about.html', async () => {
    expect((await get(tuned, '/about')).body).toBe('<h1>about</h1>\n')
  })

  test('--cors: every response allows any origin; a preflight is answered 204', async () => {
    const file = await get(tuned, '/app.js', { headers: { origin: 'https://example.com' } })
    expect(file.headers.get('access-control-allow-origin')).toBe('*')
    expect(file.headers.get('access-control-expose-headers')).toMatch(/Content-Range/)
    const preflight = await fetch(new URL('/app.js', tuned.url), {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
    expect(preflight.headers.get('access-control-allow-headers')).toBe('range')
  })

  test('--max-age 1h, --immutable: max-age=3600, hashed names a year and immutable', async () => {
    expect((await get(tuned, '/app.js')).headers.get('cache-control')).toBe('public, max-age=3600')
    for (const path of ['/main.3f2a1b9c.js', '/index-BQxKfTda.js']) {
      expect((await get(tuned, path)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    }
  })

  test('--no-etag: no ETag; --dotfiles allow: .env is served', async () => {
    expect((await get(tuned, '/app.js')).headers.get('etag')).toBe(null)
    expect((await get(tuned, '/.env')).body).toBe('SECRET=1\n')
  })

  test('--precompressed: the .br or .gz sibling as the client accepts', async () => {
    const br = await fetch(new URL('/app.js', tuned.url), { headers: { 'accept-encoding': 'br' } })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(br.headers.get('vary')).toMatch(/Accept-Encoding/)
    expect(await br.text()).toBe(appJs) // fetch decodes it
    const gz = await fetch(new URL('/app.js', tuned.url), { headers: { 'accept-encoding': 'gzip' } })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(await gz.text()).toBe(appJs)
  })
})
