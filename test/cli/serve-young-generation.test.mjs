// zcopy serve holds V8's young generation at 8 MiB (bin/lib/serve/young-generation.js):
// a crowd whose objects outlive collections grows it to Node's ceiling (32 MiB
// on Node 20 and 22, more on 24) without; a semi-space flag of the user's wins.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStderr } from './cli.mjs'

const SURVIVORS = fileURLToPath(new URL('../fixtures/cli/survivors.cjs', import.meta.url))
const MODULE = fileURLToPath(new URL('../../bin/lib/serve/young-generation.js', import.meta.url))
const CEILING = 8 * 2 ** 20

// Runs survivors.cjs in a Node of its own → the new space's bytes after the allocations.
function newSpaceAfter (nodeArgs, scriptArgs) {
  const { stderr } = spawnSync(process.execPath, [...nodeArgs, SURVIVORS, ...scriptArgs], { encoding: 'utf8' })
  return Number(/new space: (\d+)/.exec(stderr)[1])
}

describe('the young generation', () => {
  const root = makeRoot({ 'hello.txt': 'hello\n' })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  test('grows past 8 MiB without the ceiling, stays at it with, the user\'s flag wins', () => {
    expect(newSpaceAfter([], [])).toBeGreaterThan(CEILING)
    expect(newSpaceAfter([], [MODULE])).toBeLessThanOrEqual(CEILING)
    expect(newSpaceAfter(['--max-semi-space-size=16'], [MODULE])).toBeGreaterThan(CEILING)
  })

  test('zcopy serve holds it, unless NODE_OPTIONS sets a semi-space size', async () => {
    for (const [options, held] of [[`--require ${SURVIVORS}`, true], [`--require ${SURVIVORS} --max-semi-space-size=16`, false]]) {
      const serve = await startServe(root, ['--quiet'], { env: { NODE_OPTIONS: options } })
      try {
        serve.cli.child.kill('SIGUSR2')
        const [, bytes] = await waitForStderr(serve.cli, /new space: (\d+)/)
        if (held) expect(Number(bytes)).toBeLessThanOrEqual(CEILING)
        else expect(Number(bytes)).toBeGreaterThan(CEILING)
      } finally {
        await serve.stop()
      }
    }
  })
})
