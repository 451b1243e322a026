import { expect, test } from 'vitest'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

// bench/engine.js shares the CLI's socket measurement; a tiny run checks it
// end to end (not its figures: this is not a timed test).
test('bench/engine.js runs zcopy, the stream and the C loop side by side', async () => {
  const script = fileURLToPath(new URL('../../bench/engine.js', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [script, '--size', '256KiB', '--iterations', '2', '--rounds', '2', '--json'])
  const { results, targets, skipped } = JSON.parse(stdout)
  const methods = skipped ? ['zcopy', 'stream'] : ['zcopy', 'stream', 'c']
  expect(results.map((row) => row.method)).toEqual(methods)
  for (const row of results) {
    expect(row.bytesMoved).toBe(256 * 1024 * 2)
    expect(Number.isFinite(row.ratio) && row.ratio > 0).toBe(true)
  }
  expect(targets.map((target) => target.target)).toHaveLength(3)
})
