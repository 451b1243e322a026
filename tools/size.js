'use strict'

const { parseSize: parseLibSize } = require('../lib/size')
const { UsageError } = require('./usage-error')

// '4KiB' → 4096, '1MB' → 1000000, '512' → 512: lib/size.js's parser, its
// refusal a UsageError (the CLI prints its message, no stack).
function parseSize (text) {
  try {
    return parseLibSize(text)
  } catch (err) {
    throw new UsageError(err.message)
  }
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
