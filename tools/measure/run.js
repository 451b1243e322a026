'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { writeFileOfSize } = require('../temp-dir')
const { MODES } = require('./modes')
const { measureInChildProcess } = require('./measurement-process')
const { addRatios } = require('./ratios')
const { combineRounds } = require('./rounds')

// A mode's methods in the order of round `round`: rotated by one per round, so
// that over the rounds each method runs in each place (first after the file was
// written, right after another one…) as often as the others.
function methodsOfRound (mode, round) {
  const { methods } = MODES[mode]
  const shift = round % methods.length
  return [...methods.slice(shift), ...methods.slice(0, shift)]
}

// Every (mode, size, method) measurement, `rounds` times, each in its own
// process, sizes outermost so that one temporary file of each size exists at a
// time, in `dir`. onProgress({ index, total, mode, size, method, round }) is
// called before each one. Returns rows sorted by mode, then size, each with
// `ratio`: its throughput over the `baseline` method's for the same mode and
// size in the same round; with several rounds, one row per mode, size and
// method with the medians and spreads of combineRounds().
async function runBenchmarks ({ modes, sizes, dir, concurrency, duration, iterations, rounds = 1, baseline = 'stream', onProgress = () => {} }) {
  const plan = sizes.flatMap((size) => Array.from({ length: rounds }, (_, round) => round).flatMap((round) =>
    modes.flatMap((mode) => methodsOfRound(mode, round).map((method) => ({ mode, size, method, round })))))
  const rows = []
  let currentFile = null
  for (const [index, { mode, size, method, round }] of plan.entries()) {
    const file = path.join(dir, `source-${size}`)
    if (file !== currentFile) {
      if (currentFile) fs.rmSync(currentFile, { force: true })
      writeFileOfSize(file, size)
      currentFile = file
    }
    onProgress({ index, total: plan.length, mode, size, method, round })
    const result = await measureInChildProcess({ mode, file, size, method, concurrency, duration, iterations })
    rows.push({ mode, size, method, round, ...result })
  }
  const measured = addRatios(rows.map(({ warmupOperations, ...row }) => row), { baseline })
  const results = rounds > 1 ? combineRounds(measured) : measured.map(({ round, ...row }) => row)
  const byMode = (a, b) => modes.indexOf(a.mode) - modes.indexOf(b.mode) || a.size - b.size
  return results.sort(byMode)
}

// The methods of every mode, for --baseline.
const METHOD_NAMES = [...new Set(Object.values(MODES).flatMap(({ methods }) => methods))]

module.exports = { runBenchmarks, MODE_NAMES: Object.keys(MODES), METHOD_NAMES, methodsOf: (mode) => MODES[mode].methods }
