// zcopy serve holds V8's young generation at 8 MiB (bin/lib/serve/young-generation.js):
// a crowd whose objects outlive collections grows it to Node's ceiling (32 MiB
// on Node 20 and 22, more on 24 and 26) without; a semi-space flag of the
// user's wins. The ceiling is set from a 'gc' observer, which Node calls a turn
// or two of the loop after the collection: a collection in between may double
// the new space once more (16 MiB, in 2 of 50 runs on Node 20 and 22), so what
// is checked is "at most one doubling past 8 MiB" in every run and 8 MiB in most
// of five, against at least 32 MiB without. Node 26 grows the new space a page
// at a time and reports less than its target: the ceiling's test before
// 2026-12-02 left 16 MiB there in 10 runs of 10.
// What is compared is the new space's size held over the last 100 turns
// (survivors.cjs): Node 24's committed bytes pass it for a few turns at a time,
// and one reading at the end caught 19 and 24.5 MiB of a held 8 in CI.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStderr } from './cli.mjs'

const SURVIVORS = fileURLToPath(new URL('../fixtures/cli/survivors.cjs', import.meta.url))
const MODULE = fileURLToPath(new URL('../../bin/lib/serve/young-generation.js', import.meta.url))
const CEILING = 8 * 2 ** 20
const HELD = 2 * CEILING // at most one doubling past the ceiling (see above)

// Runs survivors.cjs in a Node of its own → the new space's bytes after the allocations.
function newSpaceAfter (nodeArgs, scriptArgs) {
  const { stderr } = spawnSync(process.execPath, [...nodeArgs, SURVIVORS, ...scriptArgs], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' })
  return Number(/new space: (\d+)/.exec(stderr)[1])
}

describe('the young generation', () => {
  const root = makeRoot({ 'hello.txt': 'hello\n' })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  test('grows to 32 MiB or more without the ceiling, stays within a doubling of it with, the user\'s flag wins', () => {
    expect(newSpaceAfter([], [])).toBeGreaterThan(HELD)
    const held = Array.from({ length: 5 }, () => newSpaceAfter([], [MODULE])).sort((a, b) => a - b)
    for (const bytes of held) expect(bytes).toBeLessThanOrEqual(HELD)
    expect(held[2]).toBeLessThanOrEqual(CEILING) // the median
    expect(newSpaceAfter(['--max-semi-space-size=16'], [MODULE])).toBeGreaterThan(HELD)
  }, 120_000)

  test('zcopy serve holds it, unless NODE_OPTIONS sets a semi-space size', async () => {
    for (const [options, held] of [[`--require ${SURVIVORS}`, true], [`--require ${SURVIVORS} --max-semi-space-size=16`, false]]) {
      const serve = await startServe(root, ['--quiet'], { env: { NODE_OPTIONS: options } })
      try {
        serve.cli.child.kill('SIGUSR2')
        const [, bytes] = await waitForStderr(serve.cli, /new space: (\d+)/)
        if (held) expect(Number(bytes)).toBeLessThanOrEqual(HELD)
        else expect(Number(bytes)).toBeGreaterThan(HELD)
      } finally {
        await serve.stop()
      }
    }
  })
})
