// Every relative link of README.md and docs/*.md leads somewhere: the file
// exists, and an #anchor names a heading of it (as GitHub makes anchors).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { anchorsOf, linksOf } from './markdown.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PAGES = ['README.md', 'CHANGELOG.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

test.each(PAGES)('%s: every relative link and anchor resolves', (page) => {
  const broken = []
  for (const { target, line } of linksOf(path.join(ROOT, page))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:
    const [file, anchor] = target.split('#')
    const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURI(file))
    if (!fs.existsSync(resolved)) {
      broken.push(`${page}:${line} ${target}: no such file`)
      continue
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${page}:${line} ${target}: no such anchor`)
    }
  }
  expect(broken).toEqual([])
})

test('the README stays short: what zcopy is, install, a quick start per entry point, links', () => {
  const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length
  expect(lines).toBeLessThanOrEqual(320)
})

// Issue 65, item 4: docs/http.md is the reference a user reads (options,
// behaviour, differences, recipes); how it is done, with the tests and source
// files behind it, is in docs/internals.md.
test('docs/http.md stays a user reference: at most 400 lines, no source or test files named', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'http.md'), 'utf8')
  expect(text.split('\n').length).toBeLessThanOrEqual(400)
  expect(text.match(/`(lib|bin|src|test)\/[^`]*`|\b[\w-]+\.test\.mjs\b/g)).toBeNull()
})
