'use strict'

// Summaries of the rounds: median with min–max spread, and number formatting.

const { median } = require('../../tools/median')

function sorted (values) {
  return [...values].sort((a, b) => a - b)
}

// → the middle item when ordered by `key(item)`, or for an even count the
// field-by-field mean of the two middle items (objects of numbers), so that
// parts (user, system) still add up to the median whole.
function medianBy (items, key) {
  const s = [...items].sort((a, b) => key(a) - key(b))
  const middle = s.length >> 1
  if (s.length % 2) return s[middle]
  const [a, b] = [s[middle - 1], s[middle]]
  return Object.fromEntries(Object.keys(a).map((field) => [field, (a[field] + b[field]) / 2]))
}

// 3 significant-ish digits for small figures, whole numbers with separators above.
function formatNumber (value) {
  return value < 100 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US')
}

// The median of `values` as `format` writes it, `unit` after it, then the
// min–max of the rounds (none for a single round).
function withSpread (values, format, unit = '') {
  const text = format(median(values)) + unit
  if (values.length < 2) return text
  const s = sorted(values)
  return `${text} (${format(s[0])}–${format(s[s.length - 1])})`
}

// `22,140 (20,900–23,010)`, or just the value for a single round.
function formatSpread (values) {
  return withSpread(values, formatNumber)
}

// Per-round ratios → `0.93× (0.81–1.02)`, or just `0.93×` for a single round.
function formatRatios (ratios) {
  return withSpread(ratios, (ratio) => ratio.toFixed(2), '×')
}

module.exports = { median, medianBy, withSpread, formatNumber, formatSpread, formatRatios }
