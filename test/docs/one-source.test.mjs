// One source for each figure (issue 65, item 5): the README and the user pages
// quote speed ratios that docs/benchmarks.md states with their command, the
// peer suite's result is the same number wherever it is given, and a link that
// names a page as its text leads to that page.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repo } from '../support/pack.mjs'

const read = (page) => fs.readFileSync(path.join(repo, page), 'utf8')
const DOCS = fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
const PAGES = ['README.md', ...DOCS]
// Pages a user reads for what zcopy does; their ratios come from the benchmarks.
const USER_PAGES = ['README.md', 'docs/http.md', 'docs/migrating.md', 'docs/troubleshooting.md', 'docs/typescript.md']
const benchmarks = read('docs/benchmarks.md')

// → the ratios ("8.47×", "141×") written in a page's prose and tables.
function ratiosOf (text) {
  return [...text.matchAll(/(?<![\d.])(\d+(?:\.\d+)?)×/g)].map((m) => m[1])
}

describe('figures have one source', () => {
  it.each(USER_PAGES.filter((page) => fs.existsSync(path.join(repo, page))))('each ratio %s quotes is one docs/benchmarks.md states', (page) => {
    const stated = new Set(ratiosOf(benchmarks))
    const missing = [...new Set(ratiosOf(read(page)))].filter((ratio) => !stated.has(ratio))
    expect(missing.map((ratio) => `${ratio}×`), `${page} quotes ratios docs/benchmarks.md does not state`).toEqual([])
  })

  it('@fastify/static\'s own suite: the same count of passing subtests on every page', () => {
    const counts = PAGES.filter((page) => page !== 'docs/benchmarks-log.md').flatMap((page) =>
      [...read(page).replace(/\s+/g, ' ').matchAll(/(\d+) of (?:its suite's )?390\b/g)].map((m) => `${page}: ${m[1]}`))
    expect(counts.length).toBeGreaterThanOrEqual(2)
    expect(new Set(counts.map((c) => c.split(': ')[1])).size, counts.join('; ')).toBe(1)
  })

  it.each(PAGES)('%s: a link whose text names a page leads to that page', (page) => {
    const text = read(page)
    const wrong = []
    for (const match of text.matchAll(/\[((?:docs\/)?[\w-]+\.md)\]\(([^)#\s]*)(#[^)\s]*)?\)/g)) {
      const [, label, target] = match
      const resolved = target === '' ? page : path.posix.join(path.posix.dirname(page), target)
      const named = label.includes('/') ? label : path.posix.join(path.posix.dirname(page), label)
      if (path.posix.normalize(resolved) !== path.posix.normalize(named)) wrong.push(match[0])
    }
    expect(wrong).toEqual([])
  })
})
