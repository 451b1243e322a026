// The native lane's framing of the requests it lends to Node (src/
// request_frame.cc; issue 62 item 3, the lane in front of an application's
// server): where a request it does not answer ends, head and Content-Length
// body, so that it gives Node's parser that request alone and reads the next
// one only once Node's answer is written. Case by case through the test
// binding frameRequest, then against node:http itself: generated requests of
// every method it frames, with and without bodies, mutated out of what it
// frames, each sent to a real server followed by one more request. Whatever
// the framing calls complete, Node must read the same method and target, a
// body of the same length, and the next request right after it (or close
// after its answer when the framing says so); deferring is always safe.
import { once } from 'node:events'
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { exchange } from '../support/raw-exchange.mjs'
import { mutatedHead, seededRandom, validHead } from '../support/request-heads.mjs'

const frame = (text) => native.frameRequest(Buffer.from(text, 'latin1'))
const request = (requestLine, ...fields) => `${requestLine}\r\n${fields.map((f) => f + '\r\n').join('')}\r\n`

// The methods it frames: llhttp's that Node 20.17 to 26 all accept, but CONNECT.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'ACL', 'BIND', 'CHECKOUT',
  'COPY', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE', 'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MOVE', 'NOTIFY', 'PROPFIND',
  'PROPPATCH', 'PURGE', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'UNBIND', 'UNLINK', 'UNLOCK',
  'UNSUBSCRIBE']

describe.runIf(native !== null)('frameRequest, case by case', () => {
  it.each([
    ['a GET without a body', request('GET / HTTP/1.1', 'Host: a'), { bodyLength: 0, closes: false }],
    ['a POST with a body', request('POST /form HTTP/1.1', 'Host: a', 'Content-Length: 5'), { bodyLength: 5 }],
    ['Content-Length 0', request('PUT /x HTTP/1.1', 'Content-Length: 0'), { bodyLength: 0 }],
    ['leading zeros', request('POST / HTTP/1.1', 'Content-Length: 007'), { bodyLength: 7 }],
    ['spaces and tabs before, spaces after', request('POST / HTTP/1.1', 'Content-Length:\t 12  '), { bodyLength: 12 }],
    ['15 digits', request('POST / HTTP/1.1', 'Content-Length: 999999999999999'), { bodyLength: 999999999999999 }],
    ['no Host (Node answers 400 itself)', request('DELETE /x HTTP/1.1'), { bodyLength: 0 }],
    ['Connection: close', request('POST / HTTP/1.1', 'Connection: close'), { closes: true }],
    ['HTTP/1.0', request('OPTIONS / HTTP/1.0'), { closes: true }],
    ['HTTP/1.0 keep-alive', request('GET / HTTP/1.0', 'Connection: Keep-Alive'), { closes: false }],
    ['If-Match and a duplicated field (the head parser defers both)', request('GET / HTTP/1.1', 'If-Match: "a"', 'Host: a', 'Host: b'), { bodyLength: 0 }],
    ['M-SEARCH', request('M-SEARCH / HTTP/1.1', 'Host: a'), { bodyLength: 0 }],
    ['Upgrade without Connection: upgrade (no upgrade to llhttp)', request('GET / HTTP/1.1', 'Upgrade: websocket', 'Connection: keep-alive'), {}],
    ['Expect (Node answers it)', request('PUT / HTTP/1.1', 'Expect: 100-continue', 'Content-Length: 1'), { bodyLength: 1 }],
    ['Proxy-Connection, read as Connection', request('GET / HTTP/1.0', 'Proxy-Connection: keep-alive'), { closes: false }],
    ['Connection with two tokens', request('GET / HTTP/1.1', 'Connection: keep-alive, TE'), { closes: false }],
    ['a token list with close', request('POST / HTTP/1.1', 'Connection: TE,close '), { closes: true }],
    ['HTTP/1.0 with a token list but no keep-alive', request('GET / HTTP/1.0', 'Connection: TE, x-a'), { closes: true }]
  ])('%s', (_, text, expected) => {
    const body = (expected.bodyLength ?? 0) > 0 ? 'more' : 'done' // (no body bytes given)
    expect(frame(text)).toEqual({ result: 'complete', length: text.length, bodyLength: 0, chunked: false, closes: false, body, ...expected })
  })

  const CHUNKED = request('POST /up HTTP/1.1', 'Host: a', 'Transfer-Encoding: chunked')
  it.each([
    ['two chunks and the last', '5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n', 'done'],
    ['hex in either case, leading zeros', 'a\r\n0123456789\r\n0F\r\n0123456789abcde\r\n000\r\n\r\n', 'done'],
    ['trailers', '1\r\nx\r\n0\r\nX-Sum: 1\r\nx-b:\r\n\r\n', 'done'],
    ['cut in a chunk', '5\r\nhel', 'more'],
    ['cut before the final CRLF', '0\r\n', 'more'],
    ['a chunk extension', '5;x=1\r\nhello\r\n0\r\n\r\n', 'failed'],
    ['a space after the size', '5 \r\nhello\r\n0\r\n\r\n', 'failed'],
    ['no CRLF after the data', '5\r\nhelloX\r\n0\r\n\r\n', 'failed'],
    ['a bare LF', '5\nhello\r\n0\r\n\r\n', 'failed'],
    ['no size', '\r\nhello\r\n0\r\n\r\n', 'failed'],
    ['16 hex digits', '0000000000000005\r\nhello\r\n0\r\n\r\n', 'failed'],
    ['a folded trailer', '0\r\nX-A: 1\r\n folded\r\n\r\n', 'failed']
  ])('a chunked body: %s', (_, body, outcome) => {
    const framed = frame(CHUNKED + body + 'GET /next HTTP/1.1\r\n\r\n'.slice(0, outcome === 'done' ? undefined : 0))
    expect(framed).toMatchObject({ result: 'complete', length: CHUNKED.length, chunked: true, body: outcome })
    if (outcome === 'done') expect(framed.bodyLength).toBe(body.length)
  })
  it('Transfer-Encoding: Chunked, any case', () => {
    expect(frame(request('PUT / HTTP/1.1', 'transfer-encoding:  CHUNKED ') + '0\r\n\r\n')).toMatchObject({ result: 'complete', chunked: true, body: 'done', bodyLength: 5 })
  })

  it.each([
    ['CONNECT', request('CONNECT a:443 HTTP/1.1', 'Host: a:443')],
    ['CONNECT with an origin-form target', request('CONNECT / HTTP/1.1')],
    ['a method Node does not know', request('BREW / HTTP/1.1')],
    ['QUERY (not on Node 20)', request('QUERY / HTTP/1.1')],
    ['a lowercase method', request('post / HTTP/1.1')],
    ['an asterisk target', request('OPTIONS * HTTP/1.1')],
    ['an absolute target', request('POST http://a/ HTTP/1.1')],
    ['another Transfer-Encoding', request('POST / HTTP/1.1', 'Transfer-Encoding: gzip, chunked')],
    ['Transfer-Encoding and Content-Length', request('POST / HTTP/1.1', 'Transfer-Encoding: chunked', 'Content-Length: 5')],
    ['two Transfer-Encodings', request('POST / HTTP/1.1', 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked')],
    ['Transfer-Encoding in HTTP/1.0', request('POST / HTTP/1.0', 'Transfer-Encoding: chunked')],
    ['an upgrade', request('GET / HTTP/1.1', 'Upgrade: websocket', 'Connection: Upgrade')],
    ['Connection and Proxy-Connection', request('GET / HTTP/1.1', 'Proxy-Connection: close', 'Connection: close')],
    ['two Content-Lengths', request('POST / HTTP/1.1', 'Content-Length: 1', 'Content-Length: 1')],
    ['a signed Content-Length', request('POST / HTTP/1.1', 'Content-Length: +1')],
    ['an empty Content-Length', request('POST / HTTP/1.1', 'Content-Length: ')],
    ['two numbers', request('POST / HTTP/1.1', 'Content-Length: 1 2')],
    ['a tab after the number', request('POST / HTTP/1.1', 'Content-Length: 1\t')],
    ['16 digits', request('POST / HTTP/1.1', 'Content-Length: 1000000000000000')],
    ['close and keep-alive both', request('GET / HTTP/1.0', 'Connection: close, keep-alive')],
    ['upgrade among the tokens', request('GET / HTTP/1.1', 'Upgrade: websocket', 'Connection: keep-alive, Upgrade')],
    ['an empty element', request('GET / HTTP/1.1', 'Connection: keep-alive,')],
    ['an element that is not a token', request('GET / HTTP/1.1', 'Connection: keep-alive x')],
    ['Connection with a tab after its token', request('GET / HTTP/1.1', 'Connection: close\t')],
    ['two Connection fields', request('GET / HTTP/1.1', 'Connection: close', 'Connection: close')],
    ['obs-fold', request('POST / HTTP/1.1', 'X-A: 1', ' folded')],
    ['a bare LF', 'POST / HTTP/1.1\nHost: a\r\n\r\n'],
    ['HTTP/1.2', request('POST / HTTP/1.2')],
    ['a head past 16 KiB', request('POST / HTTP/1.1', `X-Long: ${'v'.repeat(16 * 1024)}`)]
  ])('defers %s', (_, text) => {
    expect(frame(text)).toEqual({ result: 'defer' })
  })

  it('every cut of a framed head is incomplete', () => {
    const text = request('PROPPATCH /a?b HTTP/1.1', 'Host: a', 'Content-Length: 10', 'Connection: keep-alive')
    for (let cut = 0; cut < text.length; cut++) expect(frame(text.slice(0, cut)), JSON.stringify(text.slice(0, cut))).toEqual({ result: 'incomplete' })
    expect(frame(text).result).toBe('complete')
  })

  it('a head that reaches 16 KiB unfinished is deferred', () => {
    const text = `POST / HTTP/1.1\r\nX-Long: ${'v'.repeat(16 * 1024)}`
    expect(frame(text.slice(0, 16 * 1024 - 1))).toEqual({ result: 'incomplete' })
    expect(frame(text.slice(0, 16 * 1024))).toEqual({ result: 'defer' })
  })

  it('refuses what is not bytes', () => {
    expect(() => native.frameRequest('POST / HTTP/1.1\r\n\r\n')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }))
  })
})

// --- against node:http ---------------------------------------------------

const SEED = 0x62F4A3E
const VALID = 300
const MUTATED = 400
const NEXT = 'GET /next HTTP/1.1\r\nHost: a\r\n\r\n'
const LENGTHS = ['0', '1', '5', '17', '0005', ' 3 ', '\t2', '2\t', '+1', '', '1 2', '1000000000000000', 'x']

let server
let seen = []
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const entry = { method: req.method, url: req.url, body: 0 }
    seen.push(entry)
    req.on('data', (chunk) => { entry.body += chunk.length })
    req.on('end', () => {
      res.writeHead(200, { 'Content-Length': 0 })
      res.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
})
afterAll(() => server?.close())

// What Node makes of `bytes` sent on a fresh connection and then ended: the
// requests it handed to the server's handler (with how much body each had),
// and whether its first answer closes the connection.
async function nodeReads (bytes) {
  seen = []
  const answers = (await exchange(server.address().port, [bytes], { end: true })).bytes.toString('latin1')
  // (A 100 Continue comes first to Expect: 100-continue: the answer is the next.)
  const first = answers.split('\r\n\r\n').find((head) => !/^HTTP\/1\.1 100 /.test(head)) ?? ''
  return { requests: seen, closes: /\r\nConnection: close\r\n/i.test(first + '\r\n') }
}

// A chunked body of `payload`: chunks of random sizes, hex in either case,
// now and then a trailer or something llhttp reads that the lane does not.
function chunkedBody (rand, payload) {
  let out = ''
  for (let at = 0; at < payload.length;) {
    const size = 1 + rand.int(payload.length - at)
    const hex = size.toString(16)
    out += `${rand.chance(0.5) ? hex.toUpperCase() : hex}${rand.chance(0.1) ? ';ext=1' : ''}\r\n${payload.slice(at, at + size)}\r\n`
    at += size
  }
  return out + '0\r\n' + (rand.chance(0.3) ? 'X-Trailer: t\r\n' : '') + '\r\n'
}

// A request of `method` built from a generated head (`text`), with a
// Content-Length field of `length` (or none) and that many body bytes, or
// now and then a chunked body.
function withMethodAndBody (rand, text, method) {
  let out = text.replace(/^[A-Z]+/, method)
  if (rand.chance(0.2)) {
    const payload = 'c'.repeat(rand.int(40))
    return out.replace(/\r\n\r\n$/, '\r\nTransfer-Encoding: chunked\r\n\r\n') + chunkedBody(rand, payload)
  }
  const length = rand.chance(0.6) ? rand.pick(LENGTHS) : null
  if (length === null) return out
  out = out.replace(/\r\n\r\n$/, `\r\nContent-Length: ${length}\r\n\r\n`)
  const count = /^\s*\d+\s*$/.test(length) ? Number(length.trim()) : 0
  return out + 'b'.repeat(Math.min(count, 64))
}

// The payload bytes of a chunked body's text.
function chunkedLength (text) {
  let length = 0
  for (let at = 0; ;) {
    const end = text.indexOf('\r\n', at)
    const size = parseInt(text.slice(at, end), 16)
    if (size === 0) return length
    length += size
    at = end + 2 + size + 2
  }
}

it.runIf(native !== null)(`agrees with node:http on ${VALID} generated and ${MUTATED} mutated requests, each followed by another`, async () => {
  const rand = seededRandom(SEED)
  const texts = [
    ...Array.from({ length: VALID }, () => withMethodAndBody(rand, validHead(rand), rand.pick(METHODS))),
    ...Array.from({ length: MUTATED }, () => withMethodAndBody(rand, mutatedHead(rand), rand.pick([...METHODS, 'GET', 'POST'])))
  ]
  const counts = { complete: 0, incomplete: 0, defer: 0, withBody: 0, chunked: 0, nextCompared: 0 }
  for (const [index, text] of texts.entries()) {
    const framed = frame(text)
    counts[framed.result]++
    if (framed.result !== 'complete') continue
    const where = `request ${index} (seed ${SEED}): ${JSON.stringify(text)}`
    // The body generated is the one framed (longer ones are not sent whole);
    // a chunked one outside what the lane reads goes to Node whole.
    if (framed.body !== 'done') continue
    const whole = framed.length + framed.bodyLength
    if (framed.bodyLength > 0) counts.withBody++
    if (framed.chunked) counts.chunked++
    const node = await nodeReads(Buffer.from(text.slice(0, whole) + NEXT, 'latin1'))
    const [, method, target, minor] = /^(\S+) (\S+) HTTP\/1\.([01])/.exec(text)
    // HTTP/1.1 without Host: Node answers 400 itself (requireHostHeader),
    // its handler never sees the request, and reads on after it.
    const hostless = minor === '1' && !/\r\nhost:/i.test(text.slice(0, framed.length))
    const decoded = framed.chunked ? chunkedLength(text.slice(framed.length, whole)) : framed.bodyLength
    const firsts = hostless ? [] : [{ method, url: target, body: decoded }]
    expect(node.requests.slice(0, firsts.length), where).toEqual(firsts)
    if (!hostless) expect(node.closes, `${where}: closes`).toBe(framed.closes)
    if (framed.closes) continue
    counts.nextCompared++
    expect(node.requests[firsts.length], `${where}: the next request`).toEqual({ method: 'GET', url: '/next', body: 0 })
  }
  console.log('request-frame differential:', JSON.stringify(counts))
  // The generator reaches both sides (about half the generated requests carry
  // a Content-Length or a Connection value it defers).
  expect(counts.complete).toBeGreaterThanOrEqual(VALID / 2)
  expect(counts.nextCompared).toBeGreaterThan(80)
  expect(counts.withBody).toBeGreaterThan(50)
  expect(counts.chunked).toBeGreaterThan(20)
  expect(counts.defer).toBeGreaterThan(50)
}, 120_000)

// Connection values as lists, which llhttp reads token by token: where the
// lane frames one, Node closes after its answer exactly when the frame says
// so, and reads the request after it otherwise.
const CONNECTION_LISTS = ['keep-alive, TE', 'TE, close', 'close, TE', 'TE', 'te, Keep-Alive', 'x-a, x-b, close',
  ' keep-alive ,  TE ', 'keep-alive,TE', 'CLOSE,x', 'TE , keep-alive', 'closed, keep-alive', 'keep-alived',
  'keep-alive, upgrade', 'close, keep-alive', 'keep-alive,', ', close', 'keep-alive x', 'close;x', 'TE\t, close', '"close"']
it.runIf(native !== null)(`agrees with node:http on ${CONNECTION_LISTS.length} Connection lists, in HTTP/1.0 and 1.1, with a body`, async () => {
  let framed = 0
  for (const value of CONNECTION_LISTS) {
    for (const minor of ['0', '1']) {
      const head = `POST /list HTTP/1.${minor}\r\nHost: a\r\nContent-Length: 3\r\nConnection: ${value}\r\n\r\n`
      const result = frame(head + 'abc')
      const where = `${JSON.stringify(value)}, HTTP/1.${minor}`
      if (result.result === 'defer') continue
      framed++
      expect(result, where).toMatchObject({ result: 'complete', length: head.length, bodyLength: 3, body: 'done' })
      const node = await nodeReads(Buffer.from(head + 'abc' + NEXT, 'latin1'))
      expect(node.requests[0], where).toEqual({ method: 'POST', url: '/list', body: 3 })
      expect(node.closes, `${where}: closes`).toBe(result.closes)
      if (!result.closes) expect(node.requests[1], `${where}: the next request`).toEqual({ method: 'GET', url: '/next', body: 0 })
    }
  }
  expect(framed).toBe(2 * 12) // the first twelve lists; the rest are deferred
})
