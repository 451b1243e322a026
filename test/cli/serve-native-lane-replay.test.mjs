// zcopy serve --native-lane replays 304s (If-None-Match, If-Modified-Since),
// compressed variants and precompressed siblings as JavaScript answered them:
// the same bytes as without the lane but for Date, and never an answer its
// files no longer make (a rewrite, a rename over, a write through a hard link,
// a removal).
import crypto from 'node:crypto'
import fs from 'node:fs'
import zlib from 'node:zlib'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { untilCoded } from '../support/http.mjs'
import { descriptorsOf, exchange, get, loggedLines, makeRoot, startServe, withoutDate } from './serve-helpers.mjs'

// A bundle of 212 KiB whose variants are larger than the 64 KiB kept in
// memory (sent from the variant's file), and a small script whose are not.
const bundle = crypto.randomBytes(106 * 1024).toString('hex')
const script = 'export const answer = 42\n'.repeat(400)
const root = makeRoot({
  'a.txt': 'alpha\n',
  'bundle.js': bundle,
  'script.js': script,
  'style.css': 'body { color: red }\n'.repeat(100),
  'style.css.br': zlib.brotliCompressSync('body { color: red }\n'.repeat(100)),
  'rewritten.js': script,
  'renamed.js': script,
  'linked.js': script,
  'removed.js': script,
  'ranged.txt': 'ranged, first version\n'
})
const ARGS = ['--precompressed', '--quiet']
let lane
let laneWithoutAddon
let plain
beforeAll(async () => {
  [lane, laneWithoutAddon, plain] = await Promise.all([
    startServe(root, ['--native-lane', ...ARGS.filter((arg) => arg !== '--quiet')]),
    startServe(root, ['--native-lane', ...ARGS], { env: { ZCOPY_NATIVE: '0' } }),
    startServe(root, ['--no-native-lane', ...ARGS])
  ])
})
afterAll(async () => {
  await Promise.all([lane, laneWithoutAddon, plain].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

// The body as sent, decoded when it is compressed.
function decoded ({ headers, bytes }) {
  const body = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4)
  if (headers['content-encoding'] === 'br') return zlib.brotliDecompressSync(body).toString('latin1')
  if (headers['content-encoding'] === 'gzip') return zlib.gunzipSync(body).toString('latin1')
  return body.toString('latin1')
}

// GETs `path` until the server sends its variant in `coding` (made in the
// background after the first request).
async function variantOf (server, path, coding) {
  const answer = await untilCoded(() => get(server, path, `Accept-Encoding: ${coding}\r\n`), coding)
  if (answer.headers['content-encoding'] === coding) return answer
  throw new Error(`no ${coding} variant of ${path}: ${answer.status}`)
}

const request = (method, path, fields = '', version = '1.1') =>
  `${method} ${path} HTTP/${version}\r\nHost: localhost\r\n${fields}${version === '1.1' ? 'Connection: close\r\n' : ''}\r\n`

describe('zcopy serve --native-lane: 304s, variants and siblings', () => {
  let tags // path → { etag, lastModified, brTag, gzipTag }
  beforeAll(async () => {
    const servers = [lane, laneWithoutAddon, plain]
    for (const server of servers) {
      for (const path of ['/bundle.js', '/script.js']) {
        await variantOf(server, path, 'br')
        await variantOf(server, path, 'gzip')
      }
    }
    tags = {}
    for (const path of ['/a.txt', '/bundle.js', '/script.js']) {
      const { headers } = await get(plain, path)
      const br = await get(plain, path, 'Accept-Encoding: br\r\n')
      tags[path] = { etag: headers.etag, lastModified: headers['last-modified'], brTag: br.headers.etag }
    }
  }, 60_000)

  // Each case: the chunks one connection writes (`tags` known by then).
  const CASES = {
    'If-None-Match that matches: 304': () => [request('GET', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag}\r\n`)],
    'If-None-Match that does not: 200': () => [request('GET', '/a.txt', 'If-None-Match: "nope"\r\n')],
    'If-None-Match, a list with the tag': () => [request('GET', '/a.txt', `If-None-Match: "x", ${tags['/a.txt'].etag}\r\n`)],
    'If-None-Match, the weak tag without W/': () => [request('GET', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag.replace(/^W\//, '')}\r\n`)],
    'If-None-Match: *': () => [request('GET', '/a.txt', 'If-None-Match: *\r\n')],
    'If-Modified-Since: 304': () => [request('GET', '/a.txt', `If-Modified-Since: ${tags['/a.txt'].lastModified}\r\n`)],
    'If-Modified-Since long ago: 200': () => [request('GET', '/a.txt', 'If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n')],
    'HEAD with If-None-Match: 304': () => [request('HEAD', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag}\r\n`)],
    'HTTP/1.0 304 (closes: no Content-Length)': () => [request('GET', '/a.txt', `Connection: keep-alive\r\nIf-None-Match: ${tags['/a.txt'].etag}\r\n`, '1.0')],
    // llhttp reads a Connection token with a tab after it as another token.
    'HTTP/1.0 with "keep-alive\\t" (Node closes)': () => [request('GET', '/a.txt', 'Connection: keep-alive\t\r\n', '1.0')],
    '"close\\t", then a request that closes (Node keeps the connection for it)': () => [
      'GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\t\r\n\r\n' + request('GET', '/style.css')
    ],
    'pipelined 304s on one connection': () => [
      request('GET', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag}\r\n`).replace('Connection: close\r\n', '').repeat(3) +
      request('GET', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag}\r\n`)
    ],
    'a br variant in a file': () => [request('GET', '/bundle.js', 'Accept-Encoding: br\r\n')],
    'a gzip variant in a file': () => [request('GET', '/bundle.js', 'Accept-Encoding: gzip, deflate\r\n')],
    'a br variant kept in memory': () => [request('GET', '/script.js', 'Accept-Encoding: gzip, deflate, br\r\n')],
    'HEAD of a variant': () => [request('HEAD', '/bundle.js', 'Accept-Encoding: br\r\n')],
    'a 304 of a variant': () => [request('GET', '/bundle.js', `Accept-Encoding: br\r\nIf-None-Match: ${tags['/bundle.js'].brTag}\r\n`)],
    'a 304 of a variant kept in memory': () => [request('GET', '/script.js', `Accept-Encoding: br\r\nIf-None-Match: ${tags['/script.js'].brTag}\r\n`)],
    'a precompressed .br sibling': () => [request('GET', '/style.css', 'Accept-Encoding: br\r\n')],
    'the file itself, Vary and all, to a client without br': () => [request('GET', '/style.css', 'Accept-Encoding: gzip\r\n')],
    'a range: 206': () => [request('GET', '/bundle.js', 'Range: bytes=100-70000\r\n')],
    'a suffix range of a small file': () => [request('GET', '/a.txt', 'Range: bytes=-3\r\n')],
    'HEAD with a range': () => [request('HEAD', '/bundle.js', 'Range: bytes=0-0\r\n')],
    'a range and If-None-Match that does not match': () => [request('GET', '/a.txt', 'If-None-Match: "x"\r\nRange: bytes=1-2\r\n')]
  }
  for (const [name, chunksOf] of Object.entries(CASES)) {
    test(`${name}: the same bytes as without the lane, but for Date, and the repeats from the lane`, async () => {
      const chunks = chunksOf()
      const path = chunks[0].split(' ')[1]
      // Node answers (twice: a sibling is replayed once the cache keeps the
      // siblings with the file), and the lane learns the answers.
      await exchange(lane, chunks)
      await exchange(lane, chunks)
      const [withLane, withoutAddon, without] = await Promise.all([lane, laneWithoutAddon, plain].map((server) => exchange(server, chunks)))
      expect(without.length).toBeGreaterThan(0)
      expect(withoutDate(withLane)).toBe(withoutDate(without))
      expect(withoutDate(withoutAddon)).toBe(withoutDate(without))
      if (native === null) return
      // The lane holds a row for it: its own descriptor of the file, beside the cache's.
      expect(descriptorsOf(lane, `${root}${path}`)).toBeGreaterThanOrEqual(2)
    })
  }

  test('a 304 learned, then the same If-None-Match with Cache-Control: no-cache: the 200 Node gives', async () => {
    const learned = request('GET', '/a.txt', `If-None-Match: ${tags['/a.txt'].etag}\r\n`)
    await exchange(lane, [learned])
    await exchange(lane, [learned])
    for (const fields of [`Cache-Control: no-cache\r\nIf-None-Match: ${tags['/a.txt'].etag}\r\n`, `If-None-Match: ${tags['/a.txt'].etag}\r\nCache-Control: max-age=0, no-cache\r\n`]) {
      const chunks = [request('GET', '/a.txt', fields)]
      const [withLane, without] = await Promise.all([exchange(lane, chunks), exchange(plain, chunks)])
      expect(withLane.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
      expect(withoutDate(withLane)).toBe(withoutDate(without))
    }
  })

  test.runIf(native !== null)('the access log names the coding of a replayed variant, as for Node\'s answers', async () => {
    const lines = (await loggedLines(lane, '/bundle.js')).length
    for (let i = 0; i < 3; i++) await get(lane, '/bundle.js', 'Accept-Encoding: br\r\n')
    expect(descriptorsOf(lane, `${root}/bundle.js`)).toBeGreaterThanOrEqual(2) // the lane's rows
    const logged = (await loggedLines(lane, '/bundle.js')).slice(lines)
    expect(logged.length).toBe(3)
    for (const line of logged) expect(line).toMatch(/^GET \/bundle\.js 200 .* br\b/)
  })

  describe.runIf(native !== null)('never stale', () => {
    // Learns the br variant of `path` (and its 304), then changes the file
    // with `change`, and asks until the new content comes: every answer after
    // the change must be of the new content, whole (`strict`: a change a
    // watch sees), or, for a change no watch sees, the old or the new content
    // within the revalidation bound, never a length the bytes do not fill.
    async function changeAndAsk (path, change, { strict, next }) {
      expect(decoded(await variantOf(lane, path, 'br'))).toBe(script)
      await get(lane, path, 'Accept-Encoding: br\r\n')
      expect(decoded(await get(lane, path, 'Accept-Encoding: br\r\n'))).toBe(script)
      // A row of the lane checks the file: its own descriptor, beside the cache's.
      expect(descriptorsOf(lane, `${root}${path}`)).toBeGreaterThanOrEqual(2)
      change()
      let answer
      for (let i = 0; i < 200; i++) {
        answer = await get(lane, path, 'Accept-Encoding: br\r\n')
        if (next === null) {
          if (answer.status === 404) return
          if (strict) expect(answer.status).toBe(404)
        } else {
          expect(answer.status).toBe(200)
          expect(answer.bytes.length - answer.bytes.indexOf('\r\n\r\n') - 4).toBe(Number(answer.headers['content-length']))
          const body = decoded(answer)
          if (strict) expect(body).toBe(next)
          else expect([script, next]).toContain(body)
          if (body === next && answer.headers['content-encoding'] === 'br') return
        }
        await sleep(25)
      }
      throw new Error(`${path}: the change was never answered (last: ${answer.status})`)
    }

    test('a variant\'s file rewritten in place: never the old variant after the write', async () => {
      await changeAndAsk('/rewritten.js', () => fs.writeFileSync(`${root}/rewritten.js`, script.replace(/42/g, '43')), { strict: true, next: script.replace(/42/g, '43') })
    })

    test('a variant\'s file replaced by a rename over it: never the old variant after it', async () => {
      await changeAndAsk('/renamed.js', () => {
        fs.writeFileSync(`${root}/renamed.js.tmp`, script.replace(/42/g, '44'))
        fs.renameSync(`${root}/renamed.js.tmp`, `${root}/renamed.js`)
      }, { strict: true, next: script.replace(/42/g, '44') })
    })

    test('a range of a file rewritten in place: the new bytes after the write', async () => {
      const ask = () => get(lane, '/ranged.txt', 'Range: bytes=0-5\r\n')
      expect((await ask()).body).toBe('ranged')
      expect((await ask()).body).toBe('ranged')
      expect(descriptorsOf(lane, `${root}/ranged.txt`)).toBeGreaterThanOrEqual(2) // a row of the lane
      fs.writeFileSync(`${root}/ranged.txt`, 'RANGED, second version\n')
      const answer = await ask()
      expect(answer.status).toBe(206)
      expect(answer.headers['content-range']).toBe('bytes 0-5/23')
      expect(answer.body).toBe('RANGED')
    })

    test('a precompressed sibling rewritten in place, then removed: never the old sibling after it', async () => {
      const css = 'body { color: red }\n'.repeat(100)
      const ask = () => get(lane, '/style.css', 'Accept-Encoding: br\r\n')
      await ask()
      await ask()
      expect(decoded(await ask())).toBe(css)
      expect(descriptorsOf(lane, `${root}/style.css.br`)).toBeGreaterThanOrEqual(2) // a row of the lane
      const next = 'body { color: blue }\n'.repeat(100)
      fs.writeFileSync(`${root}/style.css.br`, zlib.brotliCompressSync(next))
      let answer = await ask()
      expect(answer.headers['content-encoding']).toBe('br')
      expect(decoded(answer)).toBe(next)
      fs.rmSync(`${root}/style.css.br`)
      answer = await ask()
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(decoded(answer)).toBe(css)
    })

    test('a variant\'s file removed: 404', async () => {
      await changeAndAsk('/removed.js', () => fs.rmSync(`${root}/removed.js`), { strict: true, next: null })
    })

    test('a variant\'s file written through a hard link no watch sees: the new content after the revalidation bound', async () => {
      const elsewhere = fs.mkdtempSync(`${root}-link-`)
      try {
        fs.linkSync(`${root}/linked.js`, `${elsewhere}/other-name.js`)
        const next = script.replace(/42/g, '4567') // longer: a stale length would show
        await changeAndAsk('/linked.js', () => fs.writeFileSync(`${elsewhere}/other-name.js`, next), { strict: false, next })
      } finally {
        fs.rmSync(elsewhere, { recursive: true, force: true })
      }
    })
  })
})
