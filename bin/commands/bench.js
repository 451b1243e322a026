'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { UsageError } = require('../../tools/usage-error')
const { parseSizeList, formatSize } = require('../../tools/size')
const { positiveNumber, integerInRange, choiceList, choice } = require('../../tools/validate')
const { createTempDir } = require('../../tools/temp-dir')
const { machineInfo } = require('../../tools/machine')
const { loadZcopy } = require('../../tools/load-zcopy')
const { runBenchmarks, MODE_NAMES, METHOD_NAMES, methodsOf } = require('../../tools/measure/run')
const { COLUMNS, NARROW } = require('../../tools/render/columns')
const { renderTable } = require('../../tools/render/table')
const { renderMarkdown } = require('../../tools/render/markdown')
const { renderSvg } = require('../../tools/render/svg')
const { renderExamples } = require('../lib/help-layout')
const { benchNotes } = require('../lib/bench-notes')

const DEFAULT_SIZES = '4KiB,1MiB,64MiB'
const DEFAULT_DURATION = 1
const EPILOG = `Each measurement runs in a fresh process after a short warmup; the sink or client runs in another.

Units in --json: size in bytes, throughput in bytes/s, p50/p99 in ms per transfer, cpuPerGiB in ms \
of CPU per GiB moved (user and system for the whole process, mainThread for the JavaScript thread), \
peakRss in bytes; ratio is the throughput over the baseline method's for the same mode and size \
(in the same round). With --rounds N > 1 every figure is the median of the N rounds, and \
throughputRange and ratioRange give their { min, max }.`

const EXAMPLES = [
  ['$0 bench', `every mode at ${DEFAULT_SIZES}, ${DEFAULT_DURATION} s each`],
  ['$0 bench --mode socket --sizes 1GiB --iterations 5', 'five 1 GiB transfers to a TCP sink per method'],
  ['$0 bench --mode file --sizes 1MiB --rounds 9 --baseline copyFile', 'zcopy over fs.copyFile, median of 9 rounds'],
  ['$0 bench --json > results.json', 'machine-readable results']
]

exports.command = 'bench'
exports.describe = 'Compare zcopy with fs.createReadStream().pipe() on temporary files'

exports.builder = (yargs) => yargs
  .options({
    mode: {
      describe: `What to copy to: ${MODE_NAMES.join(', ')} or all (comma-separated)`,
      type: 'string',
      default: 'all',
      coerce: choiceList('mode', MODE_NAMES)
    },
    sizes: {
      describe: 'File sizes, comma-separated (B, KiB, MiB, GiB; KB, MB, GB are powers of 1000)',
      type: 'string',
      default: DEFAULT_SIZES,
      coerce: (text) => parseSizeList(text, 'sizes')
    },
    duration: {
      describe: `Seconds to measure each method at each size [default: ${DEFAULT_DURATION}]`,
      type: 'string',
      coerce: positiveNumber('duration')
    },
    iterations: {
      describe: 'Run exactly this many transfers per method and size instead of --duration',
      type: 'string',
      coerce: integerInRange('iterations', 1, 1e9)
    },
    rounds: {
      describe: 'Measure everything this many times, the methods of each mode in a rotated order each round; ' +
        'report the medians with their min–max, each ratio the median of the per-round ratios',
      type: 'string',
      default: '1',
      coerce: integerInRange('rounds', 1, 100)
    },
    baseline: {
      describe: `The method the ratios are over (${METHOD_NAMES.join(', ')}); it must be measured in every selected mode`,
      type: 'string',
      default: 'stream',
      coerce: choice('baseline', METHOD_NAMES)
    },
    concurrency: {
      describe: 'Transfers in flight at once',
      type: 'string',
      default: '1',
      coerce: integerInRange('concurrency', 1, 256)
    },
    json: { describe: 'Print the results as JSON on stdout', type: 'boolean' },
    markdown: { describe: 'Print the results as a markdown table (every column)', type: 'boolean' },
    wide: { describe: 'Every column in the terminal table (ops/s, CPU user and sys, peak RSS); the default fits 80 columns', type: 'boolean' },
    svg: { describe: 'Also write a bar chart of throughput to FILE', type: 'string', requiresArg: true }
  })
  .conflicts('duration', 'iterations')
  .conflicts('json', 'markdown')
  .epilog(`${renderExamples(EXAMPLES)}\n\n${EPILOG}`)

// Before the run, not after it: a target that cannot be written would lose the
// results of the whole benchmark.
function checkSvgTarget (file) {
  const target = path.resolve(file)
  const dir = path.dirname(target)
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new UsageError(`cannot write --svg ${file}: no such folder ${dir}`)
  }
  let stats = null
  try {
    stats = fs.statSync(target)
  } catch {}
  if (stats && stats.isDirectory()) {
    throw new UsageError(`cannot write --svg ${file}: it is a folder (give a file name, like ${path.join(file, 'bench.svg')})`)
  }
  try {
    fs.accessSync(stats ? target : dir, fs.constants.W_OK)
  } catch (err) {
    throw new UsageError(`cannot write --svg ${file}: ${err.code === 'EACCES' || err.code === 'EROFS' ? 'permission denied' : err.code}`)
  }
}

function progressPrinter (stream, rounds) {
  if (!stream.isTTY) return { update () {}, done () {} }
  const roundOf = (round) => rounds > 1 ? ` (round ${round + 1}/${rounds})` : ''
  return {
    update: ({ index, total, mode, size, method, round }) =>
      stream.write(`\r\x1b[K[${index + 1}/${total}] ${mode} ${formatSize(size)} ${method}${roundOf(round)}…`),
    done: () => stream.write('\r\x1b[K')
  }
}

// --baseline names a method every selected mode measures.
function checkBaseline (baseline, modes) {
  const without = modes.filter((mode) => !methodsOf(mode).includes(baseline))
  if (without.length > 0) {
    throw new UsageError(`--baseline ${baseline} is not measured in --mode ${without.join(', ')} ` +
      `(${without.map((mode) => `${mode}: ${methodsOf(mode).join(', ')}`).join('; ')})`)
  }
}

exports.handler = async (argv) => {
  checkBaseline(argv.baseline, argv.mode)
  if (argv.svg !== undefined) checkSvgTarget(argv.svg)
  const zcopy = loadZcopy()
  const machine = machineInfo(zcopy)
  const progress = progressPrinter(process.stderr, argv.rounds)
  const temp = createTempDir('zcopy-bench-')
  let results
  try {
    results = await runBenchmarks({
      modes: argv.mode,
      sizes: argv.sizes,
      dir: temp.dir,
      concurrency: argv.concurrency,
      duration: argv.iterations ? undefined : argv.duration ?? DEFAULT_DURATION,
      iterations: argv.iterations,
      rounds: argv.rounds,
      baseline: argv.baseline,
      onProgress: progress.update
    })
  } finally {
    progress.done()
    temp.remove()
  }
  const report = { machine, rounds: argv.rounds, baseline: argv.baseline, results }
  if (argv.svg !== undefined) {
    fs.writeFileSync(argv.svg, renderSvg(report))
    // On stderr: stdout stays the --json or --markdown document.
    process.stderr.write(`zcopy: wrote the chart to ${path.resolve(argv.svg)}\n`)
  }
  if (argv.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n')
  else if (argv.markdown) process.stdout.write(renderMarkdown(report))
  else {
    process.stdout.write(argv.wide ? renderTable(report, COLUMNS) : renderTable(report, NARROW, { fit: true }))
    process.stdout.write(['', ...benchNotes(report, { wide: argv.wide })].join('\n') + '\n')
  }
}
