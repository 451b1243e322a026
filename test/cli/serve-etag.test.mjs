// `zcopy serve --etag content` (issue 65, item 15): two servers, in child
// processes, over a folder and its copy made with plain `cp` (new mtimes),
// answer the same ETags, compressed answers included; the default ones differ.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { expectOneLineUsageError, runCli } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const appJs = 'console.log("a line of an app that compresses well")\n'.repeat(200)
const first = makeRoot({ 'app.js': appJs, 'index.html': '<h1>app</h1>\n' })
const second = `${first}-copy`
const old = new Date('2020-01-02T03:04:05Z')
for (const name of fs.readdirSync(first)) fs.utimesSync(path.join(first, name), old, old)
execFileSync('cp', ['-r', first, second])

const tagOf = (bytes) => `"${createHash('sha256').update(bytes).digest().subarray(0, 16).toString('base64url')}"`

let servers
beforeAll(async () => {
  servers = await Promise.all([
    startServe(first, ['--etag', 'content', '--quiet']),
    startServe(second, ['--etag', 'content', '--quiet']),
    startServe(first, ['--quiet']),
    startServe(second, ['--quiet'])
  ])
})
afterAll(async () => {
  await Promise.all((servers || []).map((server) => server.stop()))
  for (const dir of [first, second]) fs.rmSync(dir, { recursive: true, force: true })
})

const etagOf = async (server, file, acceptEncoding = 'identity') => {
  const response = await fetch(new URL(file, server.url), { headers: { 'accept-encoding': acceptEncoding } })
  await response.arrayBuffer()
  return { etag: response.headers.get('etag'), encoding: response.headers.get('content-encoding') }
}

test('--etag content: the replicas agree, compressed answers included; by default they differ', async () => {
  const [a, b, plainA, plainB] = servers
  for (const file of ['/app.js', '/index.html']) {
    const bytes = fs.readFileSync(path.join(first, file))
    expect((await etagOf(a, file)).etag).toBe(tagOf(bytes))
    expect((await etagOf(b, file)).etag).toBe(tagOf(bytes))
    expect((await etagOf(plainA, file)).etag).not.toBe((await etagOf(plainB, file)).etag)
  }
  // br is made in the background after the first request that asks for it.
  const brOf = async (server) => {
    for (let i = 0; i < 100; i++) {
      const answer = await etagOf(server, '/app.js', 'br')
      if (answer.encoding === 'br') return answer.etag
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error('no br variant made')
  }
  const tag = tagOf(Buffer.from(appJs))
  expect(await brOf(a)).toBe(`W/${tag.slice(0, -1)}-br"`)
  expect(await brOf(b)).toBe(`W/${tag.slice(0, -1)}-br"`)
  expect(await brOf(plainA)).not.toBe(await brOf(plainB))
})

test('--etag with another value is refused', async () => {
  expectOneLineUsageError(await runCli(['serve', first, '--etag', 'strong']), /unknown --etag 'strong' \(expected content, or --no-etag\)/)
})
