// package.json's `engines` against the Node-line matrix (scripts/test-node-lines.js):
// each supported line's lower bound is the floor the matrix runs the suite on,
// in a form npm, Yarn 1 and pnpm all read (node-semver carets joined by ||),
// and the Node running this test (every matrix run runs it) is inside the range.
// Issue 50, item 11: the range had been each line's latest release at the time
// (^22.23.3), which refused Node 22.12 to 22.22 for no reason.
import { createRequire } from 'node:module'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { engines } = require('../../package.json')
const { LINES } = require('../../scripts/test-node-lines.js')
const range = engines.node

describe('engines.node', () => {
  it('is one caret range per supported line, from the floor the matrix tests', () => {
    const floors = LINES.filter((l) => l.floor).map((l) => `^${l.version}`)
    expect(range).toBe(floors.join(' || '))
    expect(new Set(LINES.map((l) => l.line))).toEqual(new Set(LINES.filter((l) => l.floor).map((l) => l.line)))
  })

  it('is valid node-semver (what npm, Yarn 1 and pnpm use) and admits every pinned release', () => {
    expect(semver.validRange(range)).not.toBeNull()
    for (const { version } of LINES) expect(semver.satisfies(version, range), version).toBe(true)
  })

  it('each floor is the oldest pinned release of its line; the release before it is outside', () => {
    for (const { line, version } of LINES.filter((l) => l.floor)) {
      const ofLine = LINES.filter((l) => l.line === line).map((l) => l.version)
      expect(semver.minVersion(`^${version}`).version).toBe(version)
      for (const other of ofLine) expect(semver.gte(other, version), other).toBe(true)
      const [major, minor, patch] = version.split('.').map(Number)
      const before = patch > 0 ? `${major}.${minor}.${patch - 1}` : minor > 0 ? `${major}.${minor - 1}.99` : `${major - 1}.99.99`
      expect(semver.satisfies(before, range), before).toBe(false)
    }
  })

  it(`admits the Node running the tests (${process.version})`, () => {
    expect(semver.satisfies(process.version, range)).toBe(true)
  })
})
