#!/usr/bin/env node
'use strict'

// Issue 2's benchmark: one page-cached file (1 GiB by default) sent to a
// loopback TCP sink, side by side in one run, by
//   zcopy    pipeFile(file, socket)
//   stream   fs.createReadStream(file).pipe(socket), default options
//   c        a plain C sendfile(2) loop (c/sendfile-loop.c, compiled with cc;
//            skipped when there is no compiler)
// and checked against the targets: zcopy ≥ 2× the stream's throughput,
// ≥ 0.9× the C loop's, main-thread CPU per GiB ≤ 2% of the stream's (issue 2
// asked for 10%, issue 15 for 2%).
//
//   node bench/engine.js [--size 1GiB] [--iterations 3] [--rounds 3] [--json | --markdown]
//                        [--methods zcopy,stream,c] [--variant NAME:VAR=VALUE,...]...
//
// The methods take turns, round after round, so that a burst of other load on
// the machine hits all of them alike; each method's row is its median round
// by throughput, with the slowest and fastest rounds beside it. The
// measurements are the CLI's (`zcopy bench --mode socket`); this script adds
// the C loop, the rounds and the targets.
//
// --variant adds a zcopy row measured with extra environment variables, to
// compare two builds in one run: `--variant shipped:PREBUILDS_ONLY=1` is the
// committed prebuild against the local build/ (the `zcopy` row).

const path = require('node:path')
const { parseSize, formatSize } = require('../tools/size')
const { integerInRange } = require('../tools/validate')
const { createTempDir, writeFileOfSize } = require('../tools/temp-dir')
const { machineInfo } = require('../tools/machine')
const { loadZcopy } = require('../tools/load-zcopy')
const { runSocketMode } = require('../tools/measure/socket-mode')
const { measureInChildProcess } = require('../tools/measure/measurement-process')
const { addRatios } = require('../tools/measure/ratios')
const { COLUMNS } = require('../tools/render/columns')
const { formatRatio, formatMBps, formatNumber } = require('../tools/render/format')
const { renderTable } = require('../tools/render/table')
const { renderMarkdown } = require('../tools/render/markdown')
const { compileSendfileLoop, cSendfileSender } = require('./lib/c-sendfile')
const { parseOptions } = require('./lib/usage')

const TARGETS = [
  { text: 'zcopy throughput ≥ 2× stream', baseline: 'stream', check: (zcopy, base) => zcopy.throughput / base.throughput, min: 2 },
  { text: 'zcopy throughput ≥ 0.9× C sendfile loop', baseline: 'c', check: (zcopy, base) => zcopy.throughput / base.throughput, min: 0.9 },
  // Issue 15 (issue 2 asked for 10%): the event loop stays free while a big file goes out.
  {
    text: 'zcopy main-thread CPU per GiB ≤ 2% of stream',
    baseline: 'stream',
    check: (zcopy, base) => zcopy.cpuPerGiB.mainThread / base.cpuPerGiB.mainThread,
    max: 0.02
  }
]

function readOptions () {
  const { values } = parseOptions(__filename, {
    options: {
      size: { type: 'string', default: '1GiB' },
      iterations: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
      markdown: { type: 'boolean', default: false },
      variant: { type: 'string', multiple: true, default: [] },
      methods: { type: 'string', default: 'zcopy,stream,c' }
    }
  })
  return {
    ...values,
    size: parseSize(values.size),
    iterations: integerInRange('iterations', 1, 1000)(values.iterations),
    rounds: integerInRange('rounds', 1, 100)(values.rounds)
  }
}

function medianByThroughput (rows) {
  return [...rows].sort((a, b) => a.throughput - b.throughput)[Math.floor((rows.length - 1) / 2)]
}

// The slowest and fastest rounds' throughput.
function spreadOf (rows) {
  const throughputs = rows.map((row) => row.throughput)
  return { min: Math.min(...throughputs), max: Math.max(...throughputs) }
}

// --variant NAME:VAR=VALUE,... → Map NAME → { VAR: VALUE }
function parseVariants (specs) {
  return new Map(specs.map((spec) => {
    const [name, assignments = ''] = spec.split(/:(.*)/s)
    const env = Object.fromEntries(assignments.split(',').filter(Boolean).map((pair) => pair.split(/=(.*)/s).slice(0, 2)))
    return [name, env]
  }))
}

// Runs `fn` with `env` added to process.env (the measurement process inherits it).
async function withEnv (env, fn) {
  if (!env) return fn()
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    return await fn()
  } finally {
    for (const name of Object.keys(env)) {
      if (name in saved) process.env[name] = saved[name]
      else delete process.env[name]
    }
  }
}

function checkTargets (rows) {
  const find = (method) => rows.find((row) => row.method === method)
  return TARGETS.map(({ text, baseline, check, min, max }) => {
    if (!find(baseline) || !find('zcopy')) return { target: text, value: null, met: null }
    const value = check(find('zcopy'), find(baseline))
    return { target: text, value, met: min !== undefined ? value >= min : value <= max }
  })
}

async function main () {
  const options = readOptions()
  const zcopy = loadZcopy()
  const machine = machineInfo(zcopy)
  const temp = createTempDir('zcopy-engine-bench-')
  const compiled = compileSendfileLoop()
  const variants = parseVariants(options.variant)
  const methods = [...options.methods.split(',').filter((m) => m !== 'c' || compiled.binary), ...variants.keys()]
  const rounds = Object.fromEntries(methods.map((method) => [method, []]))
  try {
    const file = path.join(temp.dir, 'source')
    writeFileOfSize(file, options.size)
    for (let round = 1; round <= options.rounds; round++) {
      for (const method of methods) {
        process.stderr.write(`round ${round}/${options.rounds}: ${method}, ${options.iterations} × ${formatSize(options.size)}\n`)
        const variant = variants.get(method)
        const measurement = { mode: 'socket', method: variant ? 'zcopy' : method, file, size: options.size, concurrency: 1, iterations: options.iterations }
        // zcopy and the stream run exactly as in `zcopy bench`, each in a fresh
        // process; the C loop is its own process already.
        const { warmupOperations, ...result } = method === 'c'
          ? await runSocketMode({ ...measurement, sender: cSendfileSender(compiled.binary) })
          : await withEnv(variant, () => measureInChildProcess(measurement))
        rounds[method].push({ mode: 'socket', size: options.size, ...result, method })
        process.stderr.write(`  ${formatMBps(result.throughput)} MB/s, main thread ${formatNumber(result.cpuPerGiB.mainThread)} ms/GiB\n`)
      }
    }
  } finally {
    temp.remove()
  }
  const rows = Object.values(rounds).map((all) => ({ ...medianByThroughput(all), spread: spreadOf(all) }))
  const results = addRatios(addRatios(rows), { key: 'ratioToC', baseline: 'c' })
  const targets = checkTargets(results)
  const report = { machine, results, targets, ...(compiled.skipped && { skipped: { c: compiled.skipped } }) }
  if (options.json) return process.stdout.write(JSON.stringify(report, null, 2) + '\n')
  const columns = [
    ...COLUMNS.slice(0, 4),
    { header: 'MB/s min–max', cell: ({ spread }) => `${formatMBps(spread.min)}–${formatMBps(spread.max)}`, right: true },
    ...COLUMNS.slice(4),
    { header: 'vs C loop', cell: (row) => formatRatio(row.ratioToC), right: true }
  ]
  process.stdout.write((options.markdown ? renderMarkdown : renderTable)(report, columns))
  if (compiled.skipped) process.stdout.write(`\nC sendfile loop skipped: ${compiled.skipped}\n`)
  process.stdout.write('\n' + targets.map(({ target, value, met }) =>
    `${met === null ? '-' : met ? '✓' : '✗'} ${target}: ${value === null ? 'not measured' : value.toFixed(3)}`).join('\n') + '\n')
}

main().catch((err) => {
  process.stderr.write(`bench/engine.js: ${err.message}\n`)
  process.exitCode = err.name === 'UsageError' ? 2 : 1
})
