// Figures the docs give about the package itself, checked against what they
// describe so that they cannot go stale (issue 50, item 4): docs/install.md's
// tarball size, unpacked size and file count against `npm pack --dry-run`, and
// its prebuild sizes against prebuilds/. Sizes as npm prints them (1 kB = 1,000
// bytes), within 5 % (the tarball) or 3 % (a prebuild); the file count exact.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repo } from '../support/pack.mjs'

const run = promisify(execFile)
const install = fs.readFileSync(path.join(repo, 'docs', 'install.md'), 'utf8').replace(/\s+/g, ' ')

const near = (stated, actual, tolerance) => Math.abs(stated - actual) <= actual * tolerance

describe('docs/install.md: what is in the package', () => {
  it('the tarball size, unpacked size and file count are npm pack\'s', async () => {
    const match = /makes a tarball of (\d+) kB \(([\d.]+) MB unpacked, (\d+) files;/.exec(install)
    expect(match, 'the sentence "makes a tarball of N kB (N MB unpacked, N files;"').not.toBeNull()
    const npm = process.env.npm_execpath && /\.c?js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm']
    const { stdout } = await run(npm[0], [...npm.slice(1), 'pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repo, maxBuffer: 16 * 1024 * 1024 })
    const [packed] = JSON.parse(stdout)
    const actual = `${Math.round(packed.size / 1000)} kB (${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${packed.entryCount} files`
    const [, kB, MB, files] = match.map(Number)
    expect(near(kB * 1000, packed.size, 0.05), `docs say ${match[0]}; npm pack: ${actual}`).toBe(true)
    expect(near(MB * 1e6, packed.unpackedSize, 0.05), `docs say ${match[0]}; npm pack: ${actual}`).toBe(true)
    expect(files, `docs say ${match[0]}; npm pack: ${actual}`).toBe(packed.entryCount)
  }, 60_000)

  it('the prebuild sizes are those in prebuilds/', () => {
    const match = /glibc: x64 (\d+) kB, arm64 (\d+) kB; musl: x64 (\d+) kB, arm64 (\d+) kB/.exec(install)
    expect(match, 'the phrase "glibc: x64 N kB, arm64 N kB; musl: x64 N kB, arm64 N kB"').not.toBeNull()
    const files = ['linux-x64/zcopy.glibc.node', 'linux-arm64/zcopy.glibc.node', 'linux-x64/zcopy.musl.node', 'linux-arm64/zcopy.musl.node']
    const sizes = files.map((file) => fs.statSync(path.join(repo, 'prebuilds', file)).size)
    const actual = `glibc: x64 ${Math.round(sizes[0] / 1000)} kB, arm64 ${Math.round(sizes[1] / 1000)} kB; musl: x64 ${Math.round(sizes[2] / 1000)} kB, arm64 ${Math.round(sizes[3] / 1000)} kB`
    files.forEach((file, i) => expect(near(Number(match[i + 1]) * 1000, sizes[i], 0.03), `docs say ${match[0]}; prebuilds/: ${actual}`).toBe(true))
  })
})

// Issue 50, items 1-2, and issue 65, item 3: the README's benchmark section is
// one small table of ratios a reader takes in at a glance, dated, on a named
// machine, with a link to the commands and spreads; the reference page stays
// one a user reads, the history going to the log.
describe('benchmark pages', () => {
  const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8')

  it('the README\'s Benchmark section: one table of ratios, zcopy against each peer, dated, linked to the commands', () => {
    const section = /\n## Benchmark\n([\s\S]*?)\n## /.exec(readme)[1].trimEnd()
    expect(section.split('\n').length).toBeLessThanOrEqual(40)
    expect(section).toMatch(/measured\s+\d{4}-\d\d-\d\d/)
    expect(section).toMatch(/2-vCPU VM \([^)]*Node \d+\.\d+\.\d+\)/)
    expect(section).toContain('](docs/benchmarks.md#current-figures)')
    const table = section.split('\n').filter((line) => line.startsWith('|'))
    expect(table[0]).toBe('| zcopy ÷ | small files (4 KiB) | big files (1 MiB) | HTTPS (1 MiB) | compressed text |')
    const peers = table.slice(2).map((row) => row.split('|')[1].trim())
    for (const peer of ['express.static', 'sirv', '@fastify/static', "Node's floor", 'nginx']) {
      expect(peers.some((name) => name.startsWith(peer)), peer).toBe(true)
    }
    for (const row of table.slice(2)) {
      for (const cell of row.split('|').slice(2, -1).map((c) => c.trim())) expect(cell, row).toMatch(/^(\d+(\.\d+)?×( \(`[^`]+`\))?)?$/)
    }
  })

  it('docs/benchmarks.md is at most 300 lines; the log keeps the dated runs', () => {
    expect(fs.readFileSync(path.join(repo, 'docs', 'benchmarks.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300)
    const log = fs.readFileSync(path.join(repo, 'docs', 'benchmarks-log.md'), 'utf8')
    expect(log.match(/^#### 2026-/gm).length).toBeGreaterThanOrEqual(15)
  })
})
