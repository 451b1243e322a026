'use strict'

const { formatSize } = require('../size')

// Three significant digits, thousands separated: 2345.6 → '2,350', 0.01234 → '0.0123'.
function formatNumber (value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–'
  return value.toLocaleString('en-US', { maximumSignificantDigits: 3 })
}

const formatMBps = (bytesPerSecond) => formatNumber(bytesPerSecond / 1e6)
const formatRatio = (ratio) => `${formatNumber(ratio)}×`
const formatMiB = (bytes) => bytes === null ? '–' : formatNumber(bytes / 1024 ** 2)

function describeMachine (machine) {
  return [
    machine.date.slice(0, 10),
    `${machine.os} ${machine.arch}`,
    `${machine.cpus} × ${machine.cpuModel}`,
    `Node ${machine.node}`,
    machine.commit ? `zcopy ${machine.zcopy} (commit ${machine.commit})` : `zcopy ${machine.zcopy}`,
    `zero-copy ${machine.zeroCopy ? 'on' : 'off (stream fallback)'}`
  ].join(' · ')
}

// The machine line, and how the figures were taken when over several rounds.
function describeReport ({ machine, rounds = 1 }) {
  const text = describeMachine(machine)
  return rounds > 1 ? `${text} · median of ${rounds} alternating rounds (min–max)` : text
}

// `text` broken at its ' · ' separators into lines of at most `width`
// characters (a part longer than that stays whole, on its own line).
function wrapAtSeparators (text, width) {
  const lines = []
  for (const part of text.split(' · ')) {
    const last = lines.length - 1
    if (last >= 0 && lines[last].length + 3 + part.length <= width) lines[last] += ' · ' + part
    else lines.push(part)
  }
  return lines
}

module.exports = { formatNumber, formatMBps, formatRatio, formatMiB, formatSize, describeMachine, describeReport, wrapAtSeparators }
