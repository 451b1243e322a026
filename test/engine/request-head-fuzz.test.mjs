// Fuzz of the native lane's request-head parser (src/request_head.cc) for
// FUZZ_SECONDS (60; ZCOPY_FUZZ_SECONDS changes it, ZCOPY_FUZZ_SEED replays a
// run): random bytes, heads of the subset cut and with bytes changed, and the
// mutations of test/support/request-heads.mjs, each classified by the parser
// (through its test binding) and by a second statement of the subset below,
// written from the rules rather than from the C++: whole-line regular
// expressions for a head, and for an unfinished one the question whether any
// ending makes it a head of the subset. Both must give the same class and,
// for a complete head, the same length and values. In the slow set
// (vitest.config.mjs): a minute of CPU.
import { expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { mutatedHead, seededRandom, validHead } from '../support/request-heads.mjs'

const FUZZ_SECONDS = Number(process.env.ZCOPY_FUZZ_SECONDS || 60)
const SEED = Number(process.env.ZCOPY_FUZZ_SEED || (Date.now() % 0x100000000))

// The subset, as docs/internals.md ("Native lane: the request-head parser")
// states it.
const MAX_BYTES = 16 * 1024
const MAX_FIELDS = 100
const REQUEST_LINE = /^(GET|HEAD) (\/[\x21\x22\x24-\x7E]*) HTTP\/1\.([01])$/
const FIELD_LINE = /^([-!#$%&'*+.^_`|~0-9A-Za-z]+):[ \t]*([\t\x20-\x7E\x80-\xFF]*?)[ \t]*$/
const DEFERRED_NAMES = new Set(['content-length', 'transfer-encoding', 'expect', 'upgrade', 'if-match',
  'if-unmodified-since', 'if-range', 'proxy-connection'])
const READ = {
  host: 'host',
  'accept-encoding': 'acceptEncoding',
  'if-none-match': 'ifNoneMatch',
  'if-modified-since': 'ifModifiedSince',
  range: 'range',
  connection: 'connection'
}
const DEFER = { result: 'defer' }
const INCOMPLETE = { result: 'incomplete' }

// `text` as one whole head of the subset (what parseRequestHead answers), or null.
function wholeHead (text) {
  if (text.indexOf('\r\n\r\n') !== text.length - 4) return null
  const [requestLine, ...fields] = text.slice(0, -4).split('\r\n')
  const request = REQUEST_LINE.exec(requestLine)
  if (!request || fields.length > MAX_FIELDS) return null
  const head = { result: 'complete', length: text.length, method: request[1], versionMinor: Number(request[3]), target: request[2] }
  for (const key of Object.values(READ)) head[key] = undefined
  for (const line of fields) {
    const field = FIELD_LINE.exec(line)
    if (!field) return null
    const name = field[1].toLowerCase()
    if (DEFERRED_NAMES.has(name)) return null
    // A tab after Connection's value: llhttp reads the token otherwise.
    if (name === 'connection' && field[2] !== '' && /[ \t]*$/.exec(line)[0].includes('\t')) return null
    const key = READ[name]
    if (key === undefined) continue
    if (head[key] !== undefined) return null
    head[key] = field[2]
  }
  return head.host === undefined ? null : head
}

// Every ending an unfinished head of the subset may need: the tails of two
// heads per method, one with a field before Host, one with a field after it.
const ENDINGS = ['GET', 'HEAD'].flatMap((method) => ['X: a\r\nHost: a', 'Host: a\r\nX: a'].flatMap((fields) => {
  const head = `${method} / HTTP/1.1\r\n${fields}\r\n\r\n`
  return Array.from({ length: head.length + 1 }, (_, i) => head.slice(i))
}))

function reference (text) {
  const readable = text.slice(0, MAX_BYTES)
  const end = readable.indexOf('\r\n\r\n')
  if (end !== -1) return wholeHead(readable.slice(0, end + 4)) ?? DEFER
  if (text.length >= MAX_BYTES) return DEFER
  return ENDINGS.some((ending) => wholeHead(text + ending) !== null) ? INCOMPLETE : DEFER
}

// Bytes that matter to the grammar, weighted over the rest.
const ALPHABET = [...'GETHAD /:\r\n\t?#hostHOST-aA1.', '\r\n', 'HTTP/1.1', 'Host: ', '\x00', '\x7F', '\x80', '\xFF']
function randomInput (rand) {
  switch (rand.int(6)) {
    case 0: {
      let text = ''
      for (let n = rand.int(80); n > 0; n--) text += rand.chance(0.8) ? rand.pick(ALPHABET) : String.fromCharCode(rand.int(256))
      return text
    }
    case 1:
      return validHead(rand).slice(0, rand.chance(0.5) ? undefined : rand.int(200))
    case 2: {
      const chars = [...validHead(rand)]
      for (let n = 1 + rand.int(3); n > 0; n--) chars[rand.int(chars.length)] = String.fromCharCode(rand.int(256))
      return chars.join('')
    }
    case 3:
      return validHead(rand) + rand.pick(['', 'GET / HTTP/1.1\r\n', '\r\n', String.fromCharCode(rand.int(256))])
    default:
      return mutatedHead(rand)
  }
}

it.runIf(native !== null)(`agrees with a second statement of the subset for ${FUZZ_SECONDS} s of inputs`, () => {
  const rand = seededRandom(SEED)
  const counts = { inputs: 0, complete: 0, incomplete: 0, defer: 0 }
  const started = process.hrtime.bigint()
  const until = started + BigInt(FUZZ_SECONDS * 1e9)
  while (process.hrtime.bigint() < until) {
    for (let batch = 0; batch < 200; batch++) {
      const text = randomInput(rand)
      const parsed = native.parseRequestHead(Buffer.from(text, 'latin1'))
      const expected = reference(text)
      counts.inputs++
      counts[parsed.result]++
      if (parsed.result !== expected.result || (expected.result === 'complete' && !sameHead(parsed, expected))) {
        expect(parsed, `seed ${SEED}, input ${counts.inputs}: ${JSON.stringify(text)}`).toEqual(expected)
      }
      if (parsed.result === 'complete') expect(parsed.length).toBeLessThanOrEqual(text.length)
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  console.log(`request-head fuzz (seed ${SEED}): ${JSON.stringify(counts)} in ${seconds.toFixed(1)} s, ${Math.round(counts.inputs / seconds)} inputs/s`)
  // Each class must have been reached, or the inputs miss the subset.
  expect(counts.complete).toBeGreaterThan(0)
  expect(counts.incomplete).toBeGreaterThan(0)
  expect(counts.defer).toBeGreaterThan(0)
}, (FUZZ_SECONDS + 60) * 1000)

function sameHead (a, b) {
  return Object.keys(b).every((key) => a[key] === b[key]) && Object.keys(a).length === Object.keys(b).length
}
