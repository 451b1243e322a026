// zcopy serve --no-native-lane, given in one write a request for a file then
// bytes Node's parser refuses (`GET / HTTP/1.1\r\nH\tost: x`): found by the
// lane's fuzz (issue 62's family). Node's own handling gave the 400 alone (the
// file's answer dropped), or the file's 200 cut when its destroy came while
// sendfile was still sending the body. Now: the whole 200, then Node's 400,
// then a close, as the native lane answers (lib/http/protect/refuse-after-answers.js,
// through protectServer). Several rounds on fresh connections: the first
// finds the file not yet remembered, the others while its body still goes
// out; a connection left open fails after a generous wait, not a timing bound.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { exchange, portOf } from '../support/raw-exchange.mjs'
import { parseResponses } from '../support/http.mjs'

const FILES = { 'huge.bin': randomBytes(4 * 1024 * 1024), 'big.bin': randomBytes(200 * 1024) }
const REFUSED = 'GET / HTTP/1.1\r\nH\tost: x\r\n\r\n'
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'
const ROUNDS = 8
const PATIENCE_MS = 30_000

let root
let server
beforeAll(async () => {
  root = makeRoot(FILES)
  server = await startServe(root, ['--no-native-lane', '--quiet'])
})
afterAll(async () => {
  if (server) await server.stop()
  if (root) fs.rmSync(root, { recursive: true, force: true })
})

for (const name of Object.keys(FILES)) {
  test(`GET /${name} then bytes the parser refuses, ${ROUNDS} times: the whole 200, Node's 400, a close`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const { bytes, timedOut } = await exchange(portOf(server), [`GET /${name} HTTP/1.1\r\nHost: localhost\r\n\r\n${REFUSED}`], { timeoutMs: PATIENCE_MS })
      expect(timedOut, `round ${i}: connection left open`).toBe(false)
      const end = bytes.length - BAD_REQUEST.length
      expect(bytes.subarray(end).toString('latin1'), `round ${i}: Node's 400 last`).toBe(BAD_REQUEST)
      const answers = parseResponses(bytes.subarray(0, end))
      expect(answers.map((answer) => answer.status), `round ${i}`).toEqual([200])
      expect(Number(answers[0].headers['content-length'])).toBe(FILES[name].length)
      expect(answers[0].body.equals(FILES[name]), `round ${i}: the whole body`).toBe(true)
    }
  }, ROUNDS * PATIENCE_MS)
}
