// The native lane's request-head parser against Node's own (issue 64, item
// 3): generated heads, in the subset and mutated out of it, go both to the
// parser (the test binding parseRequestHead) and over loopback to a real
// node:http server with default options, as `zcopy serve` runs it. Whatever
// the parser calls complete, Node must accept with the same method, target,
// version and values of the fields the lane reads, and close the connection
// after its answer when the lane would; none of Node's refusals may be
// complete. Deferring is always safe (Node then gets the bytes), so the
// parser may defer what Node accepts.
import { once } from 'node:events'
import http from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { exchange } from '../support/raw-exchange.mjs'
import { mutatedHead, seededRandom, validHead } from '../support/request-heads.mjs'

const SEED = 0x64C0FFEE
const VALID = 300
const MUTATED = 500

const CONNECTION_VALUES = [' close', ' close ', ' close\t', '\tclose', ' close \t ', ' Close\t', ' keep-alive',
  ' keep-alive  ', ' keep-alive\t', '\t keep-alive', ' Keep-Alive\t ']

const FIELDS = {
  host: 'host',
  acceptEncoding: 'accept-encoding',
  ifNoneMatch: 'if-none-match',
  ifModifiedSince: 'if-modified-since',
  range: 'range',
  connection: 'connection'
}

let server
let seen = []
beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({
      method: req.method,
      url: req.url,
      major: req.httpVersionMajor,
      minor: req.httpVersionMinor,
      headers: req.headers
    })
    // Written at once, while the head is being read: the Connection field
    // of the answer is Node's keep-alive decision for it.
    res.writeHead(200, { 'Content-Length': 0 })
    res.end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
})
afterAll(() => server?.close())

// What Node makes of `bytes` sent on a fresh connection and then ended: the
// first request it hands to the server's handler, with `closes`, whether its
// answer closes the connection; or null when it hands none (a 400 or 431, or
// a head it never saw the end of).
async function nodeReads (bytes) {
  seen = []
  const answers = (await exchange(server.address().port, [bytes], { end: true })).bytes.toString('latin1')
  if (seen.length === 0) return null
  return { ...seen[0], closes: /\r\nConnection: close\r\n/i.test(answers.split('\r\n\r\n')[0] + '\r\n') }
}

// Whether the lane closes the connection after answering the head `parsed`
// (src/lane.cc, ClosesAfter), for the Connection values it answers at all
// (none, close, keep-alive; any other goes to Node): undefined for others.
function laneCloses (parsed) {
  const connection = parsed.connection?.toLowerCase()
  if (connection !== undefined && connection !== 'close' && connection !== 'keep-alive') return undefined
  return connection === 'close' || (parsed.versionMinor === 0 && connection !== 'keep-alive')
}

it.runIf(native !== null)(`agrees with node:http on ${VALID} generated and ${MUTATED} mutated heads`, async () => {
  const rand = seededRandom(SEED)
  const heads = [
    ...Array.from({ length: VALID }, () => validHead(rand)),
    ...Array.from({ length: MUTATED }, () => mutatedHead(rand)),
    // Spaces and tabs around the Connection tokens, which llhttp reads apart
    // ("close\t" keeps an HTTP/1.1 connection).
    ...['1.0', '1.1'].flatMap((version) => CONNECTION_VALUES.map((value) =>
      `GET / HTTP/${version}\r\nHost: a\r\nConnection:${value}\r\n\r\n`))
  ]
  const counts = { complete: 0, incomplete: 0, defer: 0, nodeAccepted: 0, nodeRefused: 0, deferredButAccepted: 0, keepAliveCompared: 0 }
  for (const [index, text] of heads.entries()) {
    const bytes = Buffer.from(text, 'latin1')
    const parsed = native.parseRequestHead(bytes)
    const node = await nodeReads(bytes)
    counts[parsed.result]++
    counts[node ? 'nodeAccepted' : 'nodeRefused']++
    if (parsed.result === 'defer' && node) counts.deferredButAccepted++
    const where = `head ${index} (seed ${SEED}): ${JSON.stringify(text)}`
    // An unfinished head is unfinished for Node too: it never saw a request.
    if (parsed.result === 'incomplete') expect(node, where).toBeNull()
    if (parsed.result !== 'complete') continue
    expect(node, where).not.toBeNull()
    expect({ method: node.method, url: node.url, major: node.major, minor: node.minor }, where)
      .toEqual({ method: parsed.method, url: parsed.target, major: 1, minor: parsed.versionMinor })
    for (const [key, name] of Object.entries(FIELDS)) expect(parsed[key], `${where}: ${name}`).toBe(node.headers[name])
    const closes = laneCloses(parsed)
    if (closes !== undefined) {
      counts.keepAliveCompared++
      expect(node.closes, `${where}: closes the connection`).toBe(closes)
    }
    expect(parsed.length, where).toBeLessThanOrEqual(bytes.length)
  }
  console.log('request-head differential:', JSON.stringify(counts))
  // The generator must reach both sides: heads the parser takes, and refusals.
  expect(counts.complete).toBeGreaterThanOrEqual(VALID)
  expect(counts.nodeRefused).toBeGreaterThan(100)
})
