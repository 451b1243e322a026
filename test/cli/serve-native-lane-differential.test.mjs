// zcopy serve --native-lane against zcopy serve without it (issue 64): the
// same requests, over raw sockets, each case sent three times (the first
// teaches the lane the answers, the next ones may be its hits), must give the
// same bytes but for Date, and the same end (closed, or still open when the
// client gave up). The mix (test/support/lane-requests.mjs) is seeded: methods,
// odd and hostile targets, absolute-form, very long ones, ranges, conditions,
// Accept-Encoding variants, bodies, HTTP/1.0 with and without keep-alive,
// Connection: close, pipelined bursts of hits and misses, heads cut at random
// bytes, clients that half-close (shutdown(SHUT_WR)) after their requests.
// ZCOPY_LANE_SEED replays a run; a failure prints its seed.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { descriptorsHeld, makeRoot, startServe } from './serve-helpers.mjs'
import { exchange, portOf, wholeAnswer, withoutDate } from '../support/raw-exchange.mjs'
import { FILES, SERVE_ARGS, randomRequest, seededRandom } from '../support/lane-requests.mjs'

const SEED = Number(process.env.ZCOPY_LANE_SEED || (Date.now() % 0x100000000))
const REQUESTS = 240
const ROUNDS = 3
const AT_ONCE = 4

// Node's own answer to bytes its parser refuses (a 400 or 431 with no Date):
// it writes it at once, and cuts the connection, dropping the answers to the
// requests before it that it had not written yet. Which ones those are is a
// matter of timing, with or without the lane, so such a request goes on a
// connection of its own.
const REFUSED = /^HTTP\/1\.1 4\d\d [^\r]*\r\nConnection: close\r\n\r\n$/

// → [{ requests, write: 'one' | 'each' | 'split', cuts, end }], `end` how the
// client ends: 'close' (its last request asks the server to close), or it
// half-closes (shutdown(SHUT_WR)) after its one request, 'at-once' or
// 'after-answer'. Node's server ends its side when it reads the end of the
// stream (httpAllowHalfOpen is false): an answer it had not written by then is
// dropped, a matter of timing again, with or without the lane (sameOutcome).
async function randomCases (rand, facts, server) {
  const refused = new Map()
  const isRefused = async (text) => {
    if (!refused.has(text)) {
      const { bytes } = await exchange(portOf(server), [text], { end: true, timeoutMs: 3000 })
      refused.set(text, REFUSED.test(bytes.toString('latin1')))
    }
    return refused.get(text)
  }
  const cases = []
  for (let sent = 0; sent < REQUESTS; sent += cases.at(-1).requests.length) {
    const end = rand.chance(0.25) ? rand.pick(['at-once', 'after-answer']) : 'close'
    const count = end !== 'close' ? 1 : rand.pick([1, 1, 1, 2, 2, 3, 4, 6])
    const requests = Array.from({ length: count }, (_, i) => randomRequest(rand, facts, { closing: i < count - 1 ? false : end === 'close' ? true : undefined }))
    const refusedOne = requests.length > 1 ? (await Promise.all(requests.map(isRefused))).indexOf(true) : -1
    if (refusedOne >= 0) requests.splice(0, requests.length, requests[refusedOne]) // alone
    // Node may answer a request before its body is all in (a 405 to a PUT),
    // and close: the rest of a body cut in pieces then meets a closed
    // connection (a reset, or a 400), as timing has it. Bodies go whole.
    const hasBody = requests.some((request) => /\r\n(content-length|transfer-encoding):/i.test(request))
    const write = rand.pick(hasBody ? ['one', 'each'] : ['one', 'one', 'each', 'split'])
    const length = requests.join('').length
    const cuts = Array.from({ length: 1 + rand.int(4) }, () => 1 + rand.int(Math.max(1, length - 1))).sort((a, b) => a - b)
    cases.push({ requests, write, cuts, end })
  }
  return cases
}

function chunksOf ({ requests, write, cuts }) {
  if (write === 'one') return [requests.join('')]
  if (write === 'each') return requests
  const text = requests.join('')
  return [0, ...cuts].map((at, i, all) => text.slice(at, all[i + 1])).filter((chunk) => chunk.length > 0)
}

// The outcome a client sees: the bytes (Date aside) and whether the server closed.
async function outcome (server, kase) {
  const method = kase.requests[0].slice(0, kase.requests[0].indexOf(' '))
  const { bytes, timedOut } = await exchange(portOf(server), chunksOf(kase), {
    gapMs: kase.write === 'one' ? 0 : 3,
    end: kase.end === 'at-once',
    endWhen: kase.end === 'after-answer' ? (received) => wholeAnswer(received, method) : null,
    timeoutMs: 3000
  })
  return { text: withoutDate(bytes), timedOut }
}

// Equal, or, for a client that half-closed at once, one of the two Node gives
// (itself, or after the lane's hand-off): the whole answer, or none when the
// end of the stream came first. The whole answer is what the other server gave.
function sameOutcome ({ end }, withLane, without) {
  if (withLane.timedOut !== without.timedOut) return false
  if (withLane.text === without.text) return true
  return end === 'at-once' && (withLane.text === '' || without.text === '')
}

// → { target: { etag, lastModified } } as the server gives them, for conditions that match.
async function factsOf (server) {
  const facts = {}
  for (const target of ['/a.txt', '/b.txt', '/index.html', '/style.css', '/big.bin', '/docs/readme.txt']) {
    const { bytes } = await exchange(portOf(server), [`HEAD ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`])
    const head = bytes.toString('latin1')
    facts[target] = { etag: /\r\nETag: ([^\r]*)/i.exec(head)?.[1], lastModified: /\r\nLast-Modified: ([^\r]*)/i.exec(head)?.[1] }
  }
  return facts
}

// How many descriptors `server` holds of the files under `root`: the open-file
// cache's, and with the lane each of its rows' own dup of the file it replays.
function filesHeld (server, root) {
  const real = fs.realpathSync(root)
  return descriptorsHeld(server, (target) => target.startsWith(`${real}/`))
}

// Without the addon (ZCOPY_NATIVE=0) --native-lane is off: nothing to compare.
// Each set of options the same way: the lane replays what Node's path
// decided under them (--single's fallbacks, headers of --max-age and --etag
// content, --dotfiles deny's 403s; --cors answers are never replayed, only
// lent).
const OPTION_SETS = [
  { args: SERVE_ARGS, replays: true },
  { args: ['--no-compress', '--single', '--max-age', '3600', '--etag', 'content', '--dotfiles', 'deny', '--extensions', 'html'], replays: true },
  { args: ['--no-compress', '--cors', '--immutable', '--listing'], replays: false }
]
describe.runIf(native !== null).each(OPTION_SETS)('zcopy serve --native-lane, differential, $args', ({ args, replays }) => {
  let root
  let lane
  let plain
  beforeAll(async () => {
    root = makeRoot(FILES);
    [lane, plain] = await Promise.all([startServe(root, ['--native-lane', ...args]), startServe(root, ['--no-native-lane', ...args])])
  })
  afterAll(async () => {
    await Promise.all([lane, plain].filter(Boolean).map((server) => server.stop()))
    if (root) fs.rmSync(root, { recursive: true, force: true })
  })
  test(`${REQUESTS} requests, each sent ${ROUNDS} times: the same bytes as without the lane, but for Date (seed ${SEED})`, async () => {
    const rand = seededRandom(SEED)
    const cases = await randomCases(rand, await factsOf(plain), plain)
    const requests = cases.reduce((sum, kase) => sum + kase.requests.length, 0)
    expect(requests).toBeGreaterThanOrEqual(200)
    const differences = []
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < cases.length; i += AT_ONCE) {
        await Promise.all(cases.slice(i, i + AT_ONCE).map(async (kase, j) => {
          const [withLane, without] = await Promise.all([outcome(lane, kase), outcome(plain, kase)])
          if (!sameOutcome(kase, withLane, without)) {
            differences.push({ round, case: i + j, kase, withLane, without })
          }
        }))
      }
    }
    if (differences.length > 0) {
      const first = differences[0]
      console.error(`seed ${SEED} (ZCOPY_LANE_SEED=${SEED} replays it): ${differences.length} differences; the first, round ${first.round}, case ${first.case}:\n` +
        JSON.stringify(first, null, 1).slice(0, 6000))
    }
    expect(differences.map(({ round, case: i }) => `round ${round}, case ${i}`), `seed ${SEED}`).toEqual([])
    // The lane learnt answers to replay (its answers are logged as Node's, so
    // the log cannot tell them apart): each row holds a dup of its file.
    if (replays) expect(filesHeld(lane, root), `seed ${SEED}`).toBeGreaterThan(filesHeld(plain, root))
  })
})
