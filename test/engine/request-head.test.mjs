// The native lane's request-head parser (src/request_head.cc, issue 64 item
// 3), case by case through its test binding parseRequestHead: heads of the
// subset with what it reads from them, each rule that defers, every cut of a
// head of the subset (incomplete), and the limits. test/engine/
// request-head-node.test.mjs holds it against node:http itself.
import { describe, expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'

const parse = (text) => native.parseRequestHead(Buffer.from(text, 'latin1'))
const head = (requestLine, ...fields) => `${requestLine}\r\n${fields.map((f) => f + '\r\n').join('')}\r\n`
const get = (...fields) => head('GET / HTTP/1.1', ...fields)

const NONE = {
  host: undefined,
  acceptEncoding: undefined,
  ifNoneMatch: undefined,
  ifModifiedSince: undefined,
  range: undefined,
  connection: undefined
}

// [what, head, what the parser reads that differs from GET / HTTP/1.1 and Host: a]
const COMPLETE = [
  ['the smallest head', get('Host: a'), { method: 'GET', target: '/', versionMinor: 1, host: 'a' }],
  ['HEAD', head('HEAD /x HTTP/1.1', 'Host: a'), { method: 'HEAD', target: '/x' }],
  ['HTTP/1.0', head('GET / HTTP/1.0', 'Host: a'), { versionMinor: 0 }],
  ['a query', head('GET /a/b.txt?x=1&y=%20 HTTP/1.1', 'Host: a'), { target: '/a/b.txt?x=1&y=%20' }],
  ['every target byte llhttp allows', head('GET /!"$%&\'()*+,-./:;<=>?@[\\]^_`{|}~09AZaz HTTP/1.1', 'Host: a'),
    { target: '/!"$%&\'()*+,-./:;<=>?@[\\]^_`{|}~09AZaz' }],
  ['Host with a port', get('Host: 127.0.0.1:8080'), { host: '127.0.0.1:8080' }],
  ['Accept-Encoding', get('Host: a', 'Accept-Encoding: gzip, br'), { acceptEncoding: 'gzip, br' }],
  ['If-None-Match', get('Host: a', 'If-None-Match: W/"1", "2"'), { ifNoneMatch: 'W/"1", "2"' }],
  ['If-Modified-Since', get('Host: a', 'If-Modified-Since: Wed, 21 Oct 2015 07:28:00 GMT'),
    { ifModifiedSince: 'Wed, 21 Oct 2015 07:28:00 GMT' }],
  ['Range', get('Host: a', 'Range: bytes=0-99'), { range: 'bytes=0-99' }],
  ['Connection', get('Host: a', 'Connection: close'), { connection: 'close' }],
  ['every recognised field, any order', get('Range: bytes=1-', 'connection: keep-alive', 'Host: h',
    'If-Modified-Since: d', 'accept-encoding: *', 'If-None-Match: *'),
  { host: 'h', acceptEncoding: '*', ifNoneMatch: '*', ifModifiedSince: 'd', range: 'bytes=1-', connection: 'keep-alive' }],
  ['names in any case', get('hOsT: a', 'ACCEPT-ENCODING: gzip', 'rAnGe: bytes=0-0'),
    { host: 'a', acceptEncoding: 'gzip', range: 'bytes=0-0' }],
  ['spaces and tabs around a value go', get('Host:\t  a b \t '), { host: 'a b' }],
  ['a value without a space after the colon', get('Host:a'), { host: 'a' }],
  ['an empty value is present', get('Host:', 'Range: \t'), { host: '', range: '' }],
  ['obs-text in values, read as latin1', get('Host: a\xE9\xFF', 'X-Other: \x80'), { host: 'a\xE9\xFF' }],
  ['other fields are only checked', get('User-Agent: curl/8', 'Host: a', "X-!#$%&'*+-.^_`|~: v", 'Cookie: a=b; c'),
    { host: 'a' }],
  ['a tab inside a value', get('Host: a\tb'), { host: 'a\tb' }],
  ['Connection: upgrade without Upgrade', get('Host: a', 'Connection: Upgrade'), { connection: 'Upgrade' }],
  ['spaces after Connection\'s value go', get('Host: a', 'Connection:\t close  '), { connection: 'close' }],
  ['a name that only starts like a deferred one', get('Host: a', 'Content-Lengthy: 1', 'Expected: 1'), {}],
  ['99 other fields and Host', get('Host: a', ...Array.from({ length: 99 }, (_, i) => `X-${i}: ${i}`)), { host: 'a' }]
]

// [what, head]: outside the subset, for Node's parser to read.
const DEFERRED = [
  ['a lowercase method', 'get / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a mixed-case method', 'Get / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['POST', 'POST / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['OPTIONS', 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a longer method', 'GETS / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['the HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
  ['two spaces after the method', 'GET  / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a tab after the method', 'GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['two spaces before the version', 'GET /  HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a space after the version', 'GET / HTTP/1.1 \r\nHost: a\r\n\r\n'],
  ['asterisk-form', 'GET * HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['absolute-form', 'GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['authority-form', 'GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a fragment', 'GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a tab in the target', 'GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['DEL in the target', 'GET /a\x7F HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a byte >= 0x80 in the target', 'GET /\xE9 HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['NUL in the target', 'GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['HTTP/0.9', 'GET /\r\n\r\n'],
  ['HTTP/1.2', 'GET / HTTP/1.2\r\nHost: a\r\n\r\n'],
  ['HTTP/2.0', 'GET / HTTP/2.0\r\nHost: a\r\n\r\n'],
  ['a lowercase version', 'GET / http/1.1\r\nHost: a\r\n\r\n'],
  ['a bare LF after the request line', 'GET / HTTP/1.1\nHost: a\r\n\r\n'],
  ['a leading empty line', '\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['no Host', get('Accept: */*')],
  ['no field at all', get()],
  ['two Host fields', get('Host: a', 'Host: b')],
  ['two Host fields in other cases', get('Host: a', 'HOST: a')],
  ['a repeated Accept-Encoding', get('Host: a', 'Accept-Encoding: gzip', 'accept-encoding: br')],
  ['a repeated If-None-Match', get('Host: a', 'If-None-Match: "a"', 'If-None-Match: "b"')],
  ['a repeated If-Modified-Since', get('Host: a', 'If-Modified-Since: x', 'If-Modified-Since: x')],
  ['a repeated Range', get('Host: a', 'Range: bytes=0-1', 'Range: bytes=2-3')],
  ['a repeated Connection', get('Host: a', 'Connection: close', 'Connection: keep-alive')],
  ['Content-Length', get('Host: a', 'Content-Length: 0')],
  ['Content-Length in lowercase', get('Host: a', 'content-length: 0')],
  ['Transfer-Encoding', get('Host: a', 'Transfer-Encoding: chunked')],
  ['Expect', get('Host: a', 'Expect: 100-continue')],
  ['Upgrade', get('Host: a', 'Connection: upgrade', 'Upgrade: websocket')],
  ['If-Match', get('Host: a', 'If-Match: "a"')],
  ['If-Unmodified-Since', get('Host: a', 'If-Unmodified-Since: x')],
  ['If-Range', get('Host: a', 'If-Range: "a"')],
  ['Proxy-Connection (llhttp reads it as Connection)', get('Host: a', 'Proxy-Connection: close')],
  ['a tab after Connection\'s value (llhttp reads "close\\t" as another token)', get('Host: a', 'Connection: close\t')],
  ['a tab among spaces after Connection\'s value', get('Host: a', 'Connection: keep-alive \t ')],
  ['a space before the colon', get('Host : a')],
  ['a tab before the colon', get('Host\t: a')],
  ['an empty name', get('Host: a', ': x')],
  ['a line without a colon', get('Host: a', 'X-A')],
  ['a separator in a name', get('Host: a', 'X(A): 1')],
  ['obs-fold', get('Host: a', 'X-A: 1', ' 2')],
  ['obs-fold with a tab', get('Host: a', 'X-A: 1', '\t2')],
  ['a bare LF in a value', get('Host: a\nb')],
  ['a bare CR in a value', get('Host: a\rb')],
  ['a bare LF ending a field', 'GET / HTTP/1.1\r\nHost: a\n\r\n'],
  ['a bare LF ending the head', 'GET / HTTP/1.1\r\nHost: a\r\n\n'],
  ['NUL in a value', get('Host: a\x00')],
  ['another control byte in a value', get('Host: a', 'X-A: \x01')],
  ['DEL in a value', get('Host: a', 'X-A: \x7F')],
  ['a byte >= 0x80 in a name', get('Host: a', 'X-\xE9: 1')],
  ['101 fields', get('Host: a', ...Array.from({ length: 100 }, (_, i) => `X-${i}: ${i}`))]
]

// Heads of the subset whose every cut must be incomplete.
const CUT = [
  get('Host: a'),
  head('HEAD /p?q HTTP/1.0', 'host:\t x \t', 'Range: bytes=0-1', 'X-A:'),
  get('Accept-Encoding: gzip', 'Connection: close', 'Host: h', 'If-None-Match: "e"', 'If-Modified-Since: d')
]

describe.runIf(native !== null)('parseRequestHead', () => {
  it.each(COMPLETE)('complete: %s', (_, text, read) => {
    expect(parse(text)).toEqual({
      result: 'complete',
      length: text.length,
      method: 'GET',
      versionMinor: 1,
      target: '/',
      ...NONE,
      host: 'a',
      ...read
    })
  })

  it.each(DEFERRED)('defer: %s', (_, text) => {
    expect(parse(text)).toEqual({ result: 'defer' })
  })

  it.each(CUT)('incomplete at every cut of %j, complete whole', (text) => {
    for (let cut = 0; cut < text.length; cut++) {
      expect(parse(text.slice(0, cut)), `cut at ${cut}`).toEqual({ result: 'incomplete' })
    }
    expect(parse(text).result).toBe('complete')
  })

  it('the length stops at the blank line; what follows is not read', () => {
    const text = get('Host: a')
    for (const after of ['GET / HTTP/1.1\r\n', '\x00\xFF', 'x'.repeat(20_000)]) {
      expect(parse(text + after)).toMatchObject({ result: 'complete', length: text.length, host: 'a' })
    }
  })

  it('a head up to 16 KiB long is complete; a longer one, or an unfinished one of 16 KiB, defers', () => {
    const filled = (length) => {
      const start = 'GET / HTTP/1.1\r\nHost: a\r\nX-Fill: '
      return start + 'v'.repeat(length - start.length - 4) + '\r\n\r\n'
    }
    expect(parse(filled(16 * 1024))).toMatchObject({ result: 'complete', length: 16 * 1024 })
    expect(parse(filled(16 * 1024 + 1))).toEqual({ result: 'defer' })
    expect(parse(filled(16 * 1024 + 1).slice(0, 16 * 1024))).toEqual({ result: 'defer' })
    expect(parse(filled(16 * 1024 + 1).slice(0, 16 * 1024 - 1))).toEqual({ result: 'incomplete' })
  })

  it('with 99 fields and no Host, the 100th defers as soon as it cannot be Host', () => {
    const start = 'GET / HTTP/1.1\r\n' + Array.from({ length: 99 }, (_, i) => `X-${i}: ${i}\r\n`).join('')
    expect(parse(start)).toEqual({ result: 'incomplete' })
    expect(parse(start + 'hO')).toEqual({ result: 'incomplete' })
    expect(parse(start + 'X')).toEqual({ result: 'defer' })
    expect(parse(start + 'Hostx')).toEqual({ result: 'defer' })
    expect(parse(start + 'Hos:')).toEqual({ result: 'defer' })
    expect(parse(start + 'Host: a\r\n\r\n')).toMatchObject({ result: 'complete', host: 'a' })
  })

  it('a blank line without Host defers at its CR', () => {
    expect(parse('GET / HTTP/1.1\r\nX: 1\r\n\r')).toEqual({ result: 'defer' })
  })

  it('reads a Uint8Array, an empty one as incomplete; anything else is a TypeError', () => {
    expect(native.parseRequestHead(new Uint8Array(Buffer.from(get('Host: a'))))).toMatchObject({ result: 'complete' })
    expect(native.parseRequestHead(new Uint8Array(0))).toEqual({ result: 'incomplete' })
    for (const bad of [undefined, 'GET / HTTP/1.1\r\n\r\n', 42, new Uint16Array(4), new ArrayBuffer(4), {}]) {
      expect(() => native.parseRequestHead(bad)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }))
    }
  })

  it('reads a buffer that is a slice of a larger one only within the slice', () => {
    const text = get('Host: a')
    const whole = Buffer.from(text + 'rest', 'latin1')
    expect(native.parseRequestHead(whole.subarray(0, text.length - 1))).toEqual({ result: 'incomplete' })
    expect(native.parseRequestHead(whole.subarray(0, text.length))).toMatchObject({ result: 'complete', host: 'a' })
  })
})
