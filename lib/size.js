'use strict'

// Size strings, the one parser: '4KiB' → 4096, '1MB' → 1000000, '512' → 512.
// Binary units for KiB/MiB/GiB/TiB (and the bare K/M/G/T), decimal for
// KB/MB/GB/TB, B or none for bytes; any case, spaces around and before the unit
// allowed. Whole bytes (rounded), at least one. Used by lib/http
// (ZCOPY_COPY_BUDGET) and tools/ (the CLI's size flags); imports nothing, so
// that either may take it without loading the other.

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

// → the bytes `text` says; a RangeError whose message names `text` and why
// when it is not a size.
function parseSize (text) {
  if (/^\s*-/.test(String(text))) throw new RangeError(`invalid size '${text}' (a size cannot be negative)`)
  const match = SIZE.exec(String(text).trim())
  const multiplier = match && UNITS[match[2].toUpperCase()]
  if (!multiplier) {
    throw new RangeError(`invalid size '${text}' (expected a number with an optional unit, like 4KiB, 1MiB or 1GiB)`)
  }
  const bytes = Math.round(Number(match[1]) * multiplier)
  if (bytes < 1) throw new RangeError(`invalid size '${text}' (must be at least 1 byte)`)
  if (!Number.isSafeInteger(bytes)) throw new RangeError(`invalid size '${text}' (too large)`)
  return bytes
}

module.exports = { parseSize }
