// The HTTP layer inside a Worker: descriptors are closed by what opened them (the
// addon's by the addon), so Node's per-Worker descriptor tracking has nothing to
// warn about, and the Worker exits cleanly.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const child = fileURLToPath(new URL('./children/worker-serve.cjs', import.meta.url))
let root

beforeAll(() => {
  root = makeTempDir()
  writeFileSync(join(root, 'hello.txt'), 'hello')
})

afterAll(() => removeTempDir(root))

test('serveStatic in a Worker: served, closed, no descriptor warning', () => {
  const result = spawnSync(process.execPath, [child, root], { encoding: 'utf8', timeout: 30_000 })
  expect(result.stdout).toContain('status 200')
  expect(result.stderr).not.toMatch(/closed but not opened/)
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
})
