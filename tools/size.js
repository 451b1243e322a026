'use strict'

const { UsageError } = require('./usage-error')

const UNITS = {
  '': 1,
  B: 1,
  K: 1024,
  KB: 1000,
  KIB: 1024,
  M: 1024 ** 2,
  MB: 1000 ** 2,
  MIB: 1024 ** 2,
  G: 1024 ** 3,
  GB: 1000 ** 3,
  GIB: 1024 ** 3,
  T: 1024 ** 4,
  TB: 1000 ** 4,
  TIB: 1024 ** 4
}

const SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i

// '4KiB' → 4096, '1MB' → 1000000, '512' → 512. Binary units for KiB/MiB/GiB
// (and the bare K/M/G), decimal for KB/MB/GB. Whole bytes, at least one.
function parseSize (text) {
  if (/^\s*-/.test(String(text))) throw new UsageError(`invalid size '${text}' (a size cannot be negative)`)
  const match = SIZE.exec(String(text).trim())
  const multiplier = match && UNITS[match[2].toUpperCase()]
  if (!multiplier) {
    throw new UsageError(`invalid size '${text}' (expected a number with an optional unit, like 4KiB, 1MiB or 1GiB)`)
  }
  const bytes = Math.round(Number(match[1]) * multiplier)
  if (bytes < 1) throw new UsageError(`invalid size '${text}' (must be at least 1 byte)`)
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`invalid size '${text}' (too large)`)
  return bytes
}

// '4KiB,1MiB' → [4096, 1048576], duplicates dropped, order kept.
// A bad list names the flag it came from (`--sizes: invalid size '-5KiB' ...`).
function parseSizeList (text, flag = 'sizes') {
  try {
    const items = String(text).split(',').map((item) => item.trim())
    if (items.some((item) => item === '')) throw new UsageError(`invalid size list '${text}'`)
    return [...new Set(items.map((item) => parseSize(item)))]
  } catch (err) {
    if (err instanceof UsageError) err.message = `--${flag}: ${err.message}`
    throw err
  }
}

// 4096 → '4 KiB', 1536 → '1.5 KiB', 1000 → '1000 B'.
function formatSize (bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const rounded = Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, '')
  return `${rounded} ${units[unit]}`
}

module.exports = { parseSize, parseSizeList, formatSize }
