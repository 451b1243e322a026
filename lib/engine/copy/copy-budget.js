'use strict'

// The process-wide budget for bytes read ahead of clients by copies through
// user space (piece-pool.js): ZCOPY_COPY_BUDGET, in bytes, or with a
// unit (KiB, MiB, GiB, MB..., lib/size.js); 32 MiB by default, room for 2,048 stalled clients'
// pieces at once. A value that is not a size is refused with a warning, once,
// and the default kept: a server must not fail to start over it.

const { parseSize } = require('../../size')

const DEFAULT_BUDGET = 32 * 2 ** 20

// → the budget in bytes that `text` asks for, or null when it is not one.
function parseBudget (text) {
  try {
    return parseSize(text)
  } catch {
    return null
  }
}

function copyBudget (env = process.env) {
  const text = env.ZCOPY_COPY_BUDGET
  if (text === undefined || text === '') return DEFAULT_BUDGET
  const bytes = parseBudget(text)
  if (bytes !== null) return bytes
  process.emitWarning(`ZCOPY_COPY_BUDGET=${JSON.stringify(text)} is not a size (bytes, or with a unit: KiB, MiB, GiB, MB...): ` +
    `the default, ${DEFAULT_BUDGET / 2 ** 20} MiB, is used`, { code: 'ZCOPY_BAD_COPY_BUDGET' })
  return DEFAULT_BUDGET
}

module.exports = { DEFAULT_BUDGET, copyBudget, parseBudget }
