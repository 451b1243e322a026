'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { writeFileOfSize } = require('../temp-dir')
const { MODES } = require('./modes')
const { measureInChildProcess } = require('./measurement-process')
const { addRatios } = require('./ratios')

// Every (mode, size, method) measurement, each in its own process, sizes
// outermost so that one temporary file of each size exists at a time, in `dir`.
// onProgress({ index, total, mode, size, method }) is called before each one.
// Returns rows sorted by mode, then size, each with `ratio`: its throughput
// over the stream baseline's for the same mode and size.
async function runBenchmarks ({ modes, sizes, dir, concurrency, duration, iterations, onProgress = () => {} }) {
  const plan = sizes.flatMap(size => modes.flatMap(mode => MODES[mode].methods.map(method => ({ mode, size, method }))))
  const rows = []
  let currentFile = null
  for (const [index, { mode, size, method }] of plan.entries()) {
    const file = path.join(dir, `source-${size}`)
    if (file !== currentFile) {
      if (currentFile) fs.rmSync(currentFile, { force: true })
      writeFileOfSize(file, size)
      currentFile = file
    }
    onProgress({ index, total: plan.length, mode, size, method })
    const result = await measureInChildProcess({ mode, file, size, method, concurrency, duration, iterations })
    rows.push({ mode, size, method, ...result })
  }
  const byMode = (a, b) => modes.indexOf(a.mode) - modes.indexOf(b.mode) || a.size - b.size
  return addRatios(rows.map(({ warmupOperations, ...row }) => row)).sort(byMode)
}

module.exports = { runBenchmarks, MODE_NAMES: Object.keys(MODES) }
