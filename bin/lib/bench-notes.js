'use strict'

// The lines zcopy bench prints under its table: one verdict from this run's
// figures, what the ms/GiB columns mean, and how much to trust one run.

const { formatRatio, formatSize, formatNumber } = require('../../tools/render/format')
const { wrapWords } = require('./help-layout')

const WIDTH = 80 // as the table

// The mode the verdict speaks of (the first measured, in this order), in words.
const MODE_WORDS = { socket: 'over a socket', http: 'over HTTP', file: 'to a file' }
const BASELINE_WORDS = { stream: 'the stream pipe', copyFile: 'fs.copyFile' }
// A p99 this many times the p50 in a single round: its figures are noisy.
const NOISY_TAIL = 4
// Rounds whose ratios differ by more than this factor: the median is unsure.
const NOISY_ROUNDS = 1.5
const MORE_ROUNDS = 5

// zcopy's ratio over the baseline in each size of `mode`, largest first. With
// zcopy itself the baseline, over the stream pipe (the inverse of its ratio).
function zcopyRatios (results, mode, baseline) {
  const other = baseline === 'zcopy' ? 'stream' : baseline
  const rows = results.filter((row) => row.mode === mode && row.method === (baseline === 'zcopy' ? 'stream' : 'zcopy'))
  return {
    other,
    ratios: rows.map((row) => ({ size: row.size, ratio: baseline === 'zcopy' ? 1 / row.ratio : row.ratio }))
      .filter(({ ratio }) => Number.isFinite(ratio) && ratio > 0)
      .sort((a, b) => b.size - a.size)
  }
}

// "zcopy moved 1 MiB over a socket 2.7× faster than the stream pipe, 4 KiB
// 1.3×: on this machine, in this run", or null when nothing compares. Verdict,
// unit and noise are one sentence each.
function verdictLine ({ results, baseline = 'stream' }) {
  const mode = Object.keys(MODE_WORDS).find((name) => results.some((row) => row.mode === name))
  if (mode === undefined) return null
  const { other, ratios } = zcopyRatios(results, mode, baseline)
  if (ratios.length === 0) return null
  const [first, ...rest] = ratios
  // The words follow the figure printed: 0.9996 prints 1×, "the speed of".
  const shown = formatRatio(first.ratio)
  const than = Number.parseFloat(shown) > 1 ? 'faster than' : 'the speed of'
  const more = rest.map(({ size, ratio }) => `, ${formatSize(size)} ${formatRatio(ratio)}`).join('')
  return `zcopy moved ${formatSize(first.size)} ${MODE_WORDS[mode]} ${shown} ${than} ${BASELINE_WORDS[other] || other}${more}: on this machine, in this run`
}

function unitsLine (wide) {
  return wide
    ? 'main thread, CPU user, CPU sys ms/GiB: ms of CPU per GiB moved, of the JavaScript thread and of the whole process (user, system)'
    : 'main ms/GiB: ms of JavaScript-thread CPU per GiB moved (less: a freer event loop)'
}

// One round: said always (figures of one run vary), and how noisy it looked
// (the widest p99 ÷ p50). Several: said when their ratios differed widely.
function noiseLine ({ results, rounds = 1 }) {
  if (rounds <= 1) {
    const tail = Math.max(...results.map((row) => row.p50 > 0 ? row.p99 / row.p50 : 1))
    const noisy = tail >= NOISY_TAIL ? `, noisy (a p99 ${formatNumber(tail)}× its p50)` : ''
    return `One round${noisy}: --rounds ${MORE_ROUNDS} gives each figure's median and min–max over ${MORE_ROUNDS}`
  }
  const spreads = results.filter((row) => row.ratioRange && row.ratioRange.min > 0).map((row) => row.ratioRange.max / row.ratioRange.min)
  const widest = Math.max(1, ...spreads)
  if (widest <= NOISY_ROUNDS) return null
  return `Rounds disagreed (a ratio's max ${formatNumber(widest)}× its min): --rounds ${Math.max(rounds * 2, MORE_ROUNDS * 2 - 1)} narrows the medians`
}

// The lines under the text table, wrapped to its width.
function benchNotes (report, { wide = false } = {}) {
  return [verdictLine(report), unitsLine(wide), noiseLine(report)]
    .filter((line) => line !== null)
    .flatMap((line) => wrapWords(line, WIDTH))
}

module.exports = { benchNotes, verdictLine }
