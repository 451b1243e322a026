// Request heads for the tests of the native lane's request-head parser
// (test/engine/request-head*.test.mjs): a seeded generator of heads in the
// parser's subset and of mutations that take them to its edges and beyond.
// Heads are latin1 strings (one character per byte).

// mulberry32: a small seeded generator, so that a failing head can be made
// again from the seed a test prints.
export function seededRandom (seed) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n) => Math.floor(next() * n)
  const pick = (list) => list[int(list.length)]
  const chance = (p) => next() < p
  return { next, int, pick, chance }
}

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCharCode(from + i))
const ALNUM = [...range(0x30, 0x39), ...range(0x41, 0x5A), ...range(0x61, 0x7A)]
const TCHAR = [...ALNUM, ...'!#$%&\'*+-.^_`|~']
const TARGET_CHARS = range(0x21, 0x7E).filter((c) => c !== '#')
const VCHAR = range(0x21, 0x7E)
const OBS_TEXT = range(0x80, 0xFF)

const RECOGNISED = {
  Host: ['localhost', '127.0.0.1:8080', 'example.com', '[::1]:80', 'a'],
  'Accept-Encoding': ['gzip, deflate, br', 'identity', '*', 'br;q=1.0, gzip;q=0.8'],
  'If-None-Match': ['"abc"', 'W/"1-2"', '*', '"a", "b"'],
  'If-Modified-Since': ['Wed, 21 Oct 2015 07:28:00 GMT', 'garbage'],
  Range: ['bytes=0-99', 'bytes=-5', 'bytes=1-2,4-5', 'items=0-1'],
  Connection: ['keep-alive', 'close', 'Keep-Alive, TE', 'upgrade']
}
const OTHER = {
  'User-Agent': ['curl/8.5.0', 'Mozilla/5.0 (X11; Linux x86_64)'],
  Accept: ['*/*', 'text/html,application/xhtml+xml;q=0.9'],
  Cookie: ['a=b; c=d', 'session=xyz'],
  Referer: ['http://example.com/a?b#c'],
  'Cache-Control': ['no-cache', 'max-age=0'],
  Authorization: ['Basic dXNlcjpwYXNz']
}

export const DEFERRED_FIELDS = [
  'Content-Length: 0', 'Content-Length: 5', 'Transfer-Encoding: chunked', 'Expect: 100-continue',
  'Upgrade: websocket', 'If-Match: "a"', 'If-Unmodified-Since: Wed, 21 Oct 2015 07:28:00 GMT',
  'If-Range: "a"', 'Proxy-Connection: close'
]

const ODD_TARGETS = [
  '*', 'http://example.com/a', 'example.com:443', '//double', '/a#frag', '/a b', '/\t', '', 'a/b',
  '/%zz', '/\x7F', '/\x80', '/\xE9', '/\x00', '/a?b?c', '/?', '/"<>\\^`{|}'
]
const HOSTILE = ['\x00', '\x01', '\x08', '\x0B', '\x0C', '\x1F', '\x7F', '\x80', '\xFF', ' ', '\t', '\r', '\n', '#', ':', '"', '\\', ',', ';']

function randomString (rand, chars, min, max) {
  let s = ''
  for (let n = min + rand.int(max - min + 1); n > 0; n--) s += rand.pick(chars)
  return s
}

function randomCase (rand, name) {
  if (rand.chance(0.5)) return name
  return [...name].map((c) => rand.chance(0.5) ? c.toLowerCase() : c.toUpperCase()).join('')
}

const ows = (rand) => rand.chance(0.7) ? rand.pick(['', ' ', ' ']) : randomString(rand, [' ', '\t'], 0, 3)

function randomValue (rand) {
  const chars = rand.chance(0.2) ? [...VCHAR, ' ', '\t', ...OBS_TEXT] : [...VCHAR, ' ']
  return randomString(rand, chars, 0, 30).replace(/^[ \t]+|[ \t]+$/g, '')
}

// → { method, target, minor, fields: [[name, value], ...] }: a head of the subset.
export function randomParts (rand) {
  const method = rand.pick(['GET', 'HEAD'])
  let target = '/' + randomString(rand, TARGET_CHARS, 0, 30)
  if (rand.chance(0.3)) target += '?' + randomString(rand, TARGET_CHARS, 0, 20)
  const minor = rand.pick(['0', '1'])
  const fields = [['Host', rand.pick(RECOGNISED.Host)]]
  for (const name of Object.keys(RECOGNISED).slice(1)) {
    if (rand.chance(0.4)) fields.push([name, rand.chance(0.8) ? rand.pick(RECOGNISED[name]) : randomValue(rand)])
  }
  for (let n = rand.int(5); n > 0; n--) {
    if (rand.chance(0.5)) {
      const name = rand.pick(Object.keys(OTHER))
      fields.push([name, rand.pick(OTHER[name])])
    } else {
      fields.push(['X-' + randomString(rand, TCHAR, 1, 12), randomValue(rand)])
    }
  }
  for (let i = fields.length - 1; i > 0; i--) {
    const j = rand.int(i + 1);
    [fields[i], fields[j]] = [fields[j], fields[i]]
  }
  return { method, target, minor, fields: fields.map(([name, value]) => [randomCase(rand, name), value]) }
}

export function headText ({ method, target, minor, fields }, rand) {
  const lines = fields.map(([name, value]) => `${name}:${rand ? ows(rand) : ' '}${value}${rand ? ows(rand) : ''}`)
  return `${method} ${target} HTTP/1.${minor}\r\n${lines.map((line) => line + '\r\n').join('')}\r\n`
}

export function validHead (rand) {
  return headText(randomParts(rand), rand)
}

// One change to a head's text; most take it out of the subset, some keep it in.
const MUTATIONS = [
  function methodCase (rand, text) {
    return text.replace(/^[A-Z]+/, (m) => rand.pick([m.toLowerCase(), m[0] + m.slice(1).toLowerCase(), randomCase(rand, m)]))
  },
  function hostileByte (rand, text) {
    const at = rand.int(text.length)
    const byte = rand.pick(HOSTILE)
    return rand.chance(0.5) ? text.slice(0, at) + byte + text.slice(at) : text.slice(0, at) + byte + text.slice(at + 1)
  },
  function duplicateField (rand, text) {
    const lines = text.split('\r\n')
    if (lines.length < 4) return text
    const i = 1 + rand.int(lines.length - 3)
    lines.splice(i, 0, rand.chance(0.5) ? lines[i] : randomCase(rand, lines[i].split(':')[0]) + ': other')
    return lines.join('\r\n')
  },
  function obsFold (rand, text) {
    const lines = text.split('\r\n')
    if (lines.length < 4) return text
    const i = 1 + rand.int(lines.length - 3)
    lines.splice(i + 1, 0, rand.pick([' ', '\t']) + 'folded')
    return lines.join('\r\n')
  },
  function bareLineFeed (rand, text) {
    const ends = [...text.matchAll(/\r\n/g)].map((m) => m.index)
    const at = rand.pick(ends)
    return text.slice(0, at) + rand.pick(['\n', '\r', '\n\r']) + text.slice(at + 2)
  },
  function tabOrSpace (rand, text) {
    return rand.pick([
      () => text.replace(':', rand.pick([' :', '\t:'])),
      () => text.replace(' ', rand.pick(['  ', '\t', ' \t'])),
      () => text.replace(/ HTTP/, rand.pick(['  HTTP', '\tHTTP', ' HTTP '])),
      () => text.replace('\r\n', rand.pick([' \r\n', '\t\r\n'])),
      () => text.replace(/\r\n\r\n$/, '\r\n \r\n\r\n')
    ])()
  },
  function longValue (rand, text) {
    const length = rand.pick([1000, 8000, 16 * 1024 - 200, 16 * 1024, 17 * 1024])
    return text.replace(/\r\n\r\n$/, `\r\nX-Long: ${'v'.repeat(length)}\r\n\r\n`)
  },
  function oddTarget (rand, text) {
    return text.replace(/^([A-Z]+) \S*/i, (_, m) => `${m} ${rand.pick(ODD_TARGETS)}`)
  },
  function deferredField (rand, text) {
    return text.replace(/\r\n\r\n$/, `\r\n${randomCase(rand, rand.pick(DEFERRED_FIELDS))}\r\n\r\n`)
  },
  function withoutHost (rand, text) {
    return text.replace(/\r\nhost:[^\r]*/i, '')
  },
  function otherVersion (rand, text) {
    return text.replace(/HTTP\/1\.[01]/, rand.pick(['HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/1', 'HTTP/11.1', 'HTTP/1.10', '']))
  },
  function leadingLine (rand, text) {
    return rand.pick(['\r\n', '\n', ' ', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']) + text
  },
  function emptyName (rand, text) {
    return text.replace(/\r\n\r\n$/, rand.pick(['\r\n: x\r\n\r\n', '\r\n:\r\n\r\n', '\r\nX-A\r\n\r\n']))
  },
  function emptyValue (rand, text) {
    return text.replace(/\r\n([A-Za-z-]+):[^\r]*/, (_, name) => `\r\n${name}:${ows(rand)}`)
  },
  function manyFields (rand, text) {
    const count = rand.pick([98, 99, 100, 101, 150])
    return text.replace(/\r\n\r\n$/, '\r\n' + Array.from({ length: count }, (_, i) => `X-F${i}: ${i}\r\n`).join('') + '\r\n')
  },
  function otherMethod (rand, text) {
    return text.replace(/^[A-Z]+/, rand.pick(['POST', 'PUT', 'OPTIONS', 'DELETE', 'GETS', 'HEADS', 'GE', 'CONNECT', 'PRI']))
  },
  function cutShort (rand, text) {
    return text.slice(0, rand.int(text.length))
  }
]

// A head of the subset with one or two mutations.
export function mutatedHead (rand) {
  let text = validHead(rand)
  for (let n = 1 + (rand.chance(0.3) ? 1 : 0); n > 0; n--) text = rand.pick(MUTATIONS)(rand, text)
  return text
}
