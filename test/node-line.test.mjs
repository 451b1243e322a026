// `npm run test:matrix` runs the suite on each supported Node line (scripts/test-node-lines.js,
// which sets ZCOPY_TEST_NODE). A run "on Node 24" must be on 24 all the way down:
// the vitest worker and the children that tests spawn, by process.execPath or by
// the name `node`.
import { execFileSync } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { expect, it } from 'vitest'

const expected = process.env.ZCOPY_TEST_NODE
const versionOf = (node) => execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' }).trim()

it.runIf(expected)('the worker and the children it spawns run on the Node line under test', () => {
  const version = versionOf(expected)
  expect(realpathSync(process.execPath)).toBe(realpathSync(expected))
  expect(process.version).toBe(version)
  expect(versionOf(process.execPath)).toBe(version)
  expect(versionOf('node')).toBe(version)
})
