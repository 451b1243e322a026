#!/usr/bin/env node
'use strict'

// File to file, one copy after another, timed from outside as a whole process:
//   node bench/copy-loop.js zcopy|copyFile COUNT SOURCE [DESTINATION]
// copies SOURCE to DESTINATION (default: SOURCE.copy) COUNT times, with
// zcopy.pipeFile or fs.promises.copyFile, and removes the copy. Meant to be
// paired by a tool that alternates two commands and takes the ratio run by run
// (docs/benchmarks.md uses farm-bench; hyperfine does as well):
//   farm-bench -n 10 --vs 'node bench/copy-loop.js copyFile 20000 /tmp/4k' -- node bench/copy-loop.js zcopy 20000 /tmp/4k
// One copy at a time, so the figure is each method's own cost per copy, with
// no concurrency to share the two cores out unevenly (`zcopy bench --mode file`
// measures the concurrent case).

const fs = require('node:fs')
const zcopy = require('..')
const { helpIfAsked, usageError } = require('./lib/usage')

const COPIERS = {
  zcopy: (source, destination) => zcopy.pipeFile(source, destination),
  copyFile: (source, destination) => fs.promises.copyFile(source, destination)
}

async function main () {
  helpIfAsked(__filename)
  const [method, countText, source, destination = `${source}.copy`] = process.argv.slice(2)
  const count = Number(countText)
  if (!(method in COPIERS) || !Number.isSafeInteger(count) || count < 1 || !source) {
    usageError(__filename, 'expected zcopy|copyFile COUNT SOURCE [DESTINATION] (--help: usage)')
  }
  const copy = COPIERS[method]
  try {
    for (let i = 0; i < count; i++) await copy(source, destination)
  } finally {
    fs.rmSync(destination, { force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
