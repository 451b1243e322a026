// Requests for the native lane's differential and fuzz tests
// (test/cli/serve-native-lane-*.test.mjs), against the folder FILES: a seeded
// mix of what the lane answers (GET and HEAD of files it has seen) and what it
// must hand to Node unchanged (other methods, odd targets, hostile bytes,
// ranges, conditions, bodies, HTTP/1.0, ...). Requests are latin1 strings.
import { seededRandom } from './request-heads.mjs'

export { seededRandom }

export const FILES = {
  'a.txt': 'alpha\n',
  'b.txt': 'bravo, a little longer\n',
  'index.html': '<h1>home</h1>\n',
  'sp ace.txt': 'a space\n',
  'é.txt': 'e acute\n',
  'docs/readme.txt': 'docs\n',
  'docs/index.html': '<p>docs index</p>\n',
  'style.css': 'body { color: red }\n'.repeat(100),
  'style.css.gz': 'not really gzip, but the precompressed sibling\n',
  'style.css.br': 'not really brotli either\n',
  'big.bin': Buffer.alloc(200 * 1024, 'b'),
  'empty.txt': '',
  '.hidden': 'secret\n',
  'listing/one.txt': '1\n',
  'listing/two.txt': '2\n'
}

// Served the same way by both servers of a differential test.
export const SERVE_ARGS = ['--no-compress', '--precompressed', '--listing']

const FILE_TARGETS = ['/a.txt', '/b.txt', '/index.html', '/', '/sp%20ace.txt', '/%C3%A9.txt', '/docs/readme.txt',
  '/docs/', '/style.css', '/big.bin', '/empty.txt']
const ODD_TARGETS = [
  '/a.txt?x=1', '/a.txt?', '/a.txt?a=%00&b=%ff', '/%61.txt', '/A.TXT', '/docs', '/docs/../a.txt', '/./a.txt',
  '/docs/./readme.txt', '//a.txt', '/docs//readme.txt', '///', '/%2e%2e/%2e%2e/etc/passwd', '/..%2fa.txt',
  '/%2e/a.txt', '/a.txt%00', '/%00', '/%zz', '/%', '/a.txt/', '/.hidden', '/listing/', '/listing',
  '/nope.txt', '/docs/nope', '/a.txt;p=1', '/sp ace.txt', '/é.txt', '/\x80\xff', '/a.txt#frag',
  '/a\x00.txt', '/a\t.txt', '/"<>\\^`{|}', 'http://localhost/a.txt', 'http://127.0.0.1:1/a.txt', '*',
  'localhost:80', 'a.txt', '', '/' + 'x'.repeat(3000), '/' + 'y'.repeat(9000) + '.txt',
  '/a.txt?' + 'q'.repeat(17 * 1024)
]
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'TRACE',
  'PROPFIND', 'get', 'Head', 'BREW', 'GETT']
const HOSTS = ['localhost', 'localhost', '127.0.0.1', 'LOCALHOST', 'localhost:1', 'evil.example', '', '[::1]']
const CODINGS = ['gzip', 'br', 'gzip, deflate, br', 'identity', '*', 'gzip;q=0', 'br;q=0.5, gzip;q=1', 'x\x80y']
const OTHER_FIELDS = ['User-Agent: curl/8.5.0', 'Accept: */*', 'Accept: application/json', 'Cookie: a=b',
  'Cache-Control: no-cache', 'X-Odd: \x80\xfe\xff', 'X-Tab:\tvalue\t', 'Pragma: no-cache', 'X-Empty:']
const CONNECTIONS = ['keep-alive', 'Keep-Alive', 'close', 'CLOSE', 'upgrade', 'keep-alive, TE', 'TE', 'keep-alive\t', 'Close\t', 'close  ',
  'TE, close', 'x-a , Keep-Alive', 'keep-alive, upgrade']

// → one request of the mix; with `closing` true, one that asks the server to
// close the connection after its answer (Connection: close, or HTTP/1.0
// without keep-alive), so that a case ending with it ends; false, one that
// does not; undefined, either. `facts` maps a target to
// { etag, lastModified } as the servers give them, for conditions that match.
export function randomRequest (rand, facts, { closing } = {}) {
  const hit = rand.chance(0.55)
  const method = hit ? rand.pick(['GET', 'GET', 'HEAD']) : rand.pick(METHODS)
  const target = hit || rand.chance(0.3) ? rand.pick(FILE_TARGETS) : rand.pick(ODD_TARGETS)
  const minor = rand.chance(0.85) ? '1' : '0'
  const fields = []
  if (minor === '1' || rand.chance(0.5)) fields.push(`Host: ${hit ? 'localhost' : rand.pick(HOSTS)}`)
  if (!hit && rand.chance(0.05)) fields.push('Host: localhost')
  if (rand.chance(0.4)) fields.push(`Accept-Encoding: ${hit ? rand.pick(CODINGS.slice(0, 3)) : rand.pick(CODINGS)}`)
  const fact = facts[target]
  if (!hit && rand.chance(0.3)) {
    fields.push(rand.pick([
      'Range: bytes=0-3', 'Range: bytes=-2', 'Range: bytes=2-', 'Range: bytes=5-1', 'Range: bytes=0-1,3-4',
      'Range: bytes=999999-', 'Range: items=0-1', 'Range: bytes=0-0'
    ]))
    if (fact && rand.chance(0.3)) fields.push(`If-Range: ${rand.pick([fact.etag, fact.lastModified, '"stale"'])}`)
  }
  if (!hit && rand.chance(0.3)) {
    fields.push(rand.pick([
      `If-None-Match: ${fact?.etag ?? '"x"'}`, 'If-None-Match: "nope"', 'If-None-Match: *',
      `If-None-Match: W/${fact?.etag ?? '"x"'}, "other"`,
      `If-Modified-Since: ${fact?.lastModified ?? 'Wed, 21 Oct 2015 07:28:00 GMT'}`,
      'If-Modified-Since: Wed, 21 Oct 2015 07:28:00 GMT', 'If-Modified-Since: garbage',
      `If-Match: ${fact?.etag ?? '"x"'}`, 'If-Unmodified-Since: Wed, 21 Oct 2015 07:28:00 GMT'
    ]))
  }
  for (let n = rand.int(3); n > 0; n--) fields.push(rand.pick(OTHER_FIELDS))
  let body = ''
  if (method === 'POST' || method === 'PUT') {
    const payload = rand.pick(['hello', '', 'x'.repeat(100)])
    if (rand.chance(0.8)) {
      fields.push(`Content-Length: ${payload.length}`)
      body = payload
    } else {
      fields.push('Transfer-Encoding: chunked')
      body = (payload ? `${payload.length.toString(16)}\r\n${payload}\r\n` : '') + '0\r\n\r\n'
    }
  }
  // Bytes after a request that closes are an error to llhttp, whose 400 then
  // races the answers before it: only a case's last request may close.
  let connection = rand.chance(0.2) ? rand.pick(CONNECTIONS) : null
  if (closing === false && minor === '0') connection = rand.pick(['keep-alive', 'Keep-Alive'])
  if (closing === false && /close/i.test(connection)) connection = null
  if (closing === true) connection = minor === '1' || rand.chance(0.5) ? rand.pick(['close', 'CLOSE']) : null
  if (connection !== null) fields.push(`Connection: ${connection}`)
  for (let i = fields.length - 1; i > 0; i--) {
    const j = rand.int(i + 1);
    [fields[i], fields[j]] = [fields[j], fields[i]]
  }
  return `${method} ${target} HTTP/1.${minor}\r\n${fields.map((field) => field + '\r\n').join('')}\r\n${body}`
}
