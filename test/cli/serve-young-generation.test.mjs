// zcopy serve holds V8's young generation at 8 MiB (bin/lib/serve/young-generation.js):
// a crowd whose objects outlive collections grows it to Node's ceiling (32 MiB
// on Node 20 and 22, more on 24 and 26) without; a semi-space flag of the
// user's wins. Five runs with the ceiling all hold 8 MiB: before 2026-12-05 the
// module read the committed bytes, which Node 20 halves when it releases the
// idle semi-space, and let the new space double to 16 MiB in 1 run of 10 (3 of
// 5 in one CI run); reading the capacity, 235 runs of 235 on Node 20 to 26
// held 8 MiB, 75 of them beside three busy loops on the two CPUs.
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

// Runs survivors.cjs in a Node of its own → the new space's bytes after the allocations.
function newSpaceAfter (nodeArgs, scriptArgs) {
  const { stderr } = spawnSync(process.execPath, [...nodeArgs, SURVIVORS, ...scriptArgs], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' })
  return Number(/new space: (\d+)/.exec(stderr)[1])
}

describe('the young generation', () => {
  const root = makeRoot({ 'hello.txt': 'hello\n' })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  test('grows to 32 MiB or more without the ceiling, holds it in every run with, the user\'s flag wins', () => {
    expect(newSpaceAfter([], [])).toBeGreaterThanOrEqual(4 * CEILING)
    const held = Array.from({ length: 5 }, () => newSpaceAfter([], [MODULE]))
    for (const bytes of held) expect(bytes).toBeLessThanOrEqual(CEILING)
    expect(newSpaceAfter(['--max-semi-space-size=16'], [MODULE])).toBeGreaterThan(2 * CEILING)
  }, 120_000)

  test('zcopy serve holds it, unless NODE_OPTIONS sets a semi-space size', async () => {
    for (const [options, held] of [[`--require ${SURVIVORS}`, true], [`--require ${SURVIVORS} --max-semi-space-size=16`, false]]) {
      const serve = await startServe(root, ['--quiet'], { env: { NODE_OPTIONS: options } })
      try {
        serve.cli.child.kill('SIGUSR2')
        const [, bytes] = await waitForStderr(serve.cli, /new space: (\d+)/)
        if (held) expect(Number(bytes)).toBeLessThanOrEqual(CEILING)
        else expect(Number(bytes)).toBeGreaterThan(2 * CEILING)
      } finally {
        await serve.stop()
      }
    }
  })
})
