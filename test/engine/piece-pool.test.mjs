// The pool of read pieces shared by bodies copied through user space
// (lib/engine/copy/piece-pool.js): bounded by a budget, waiters served as pieces come
// back, spares reused and dropped once idle; and the budget's setting
// (lib/engine/copy/copy-budget.js).
import { describe, expect, it } from 'vitest'
import { PiecePool } from '../../lib/engine/copy/piece-pool.js'
import { DEFAULT_BUDGET, copyBudget, parseBudget } from '../../lib/engine/copy/copy-budget.js'

describe('PiecePool', () => {
  it('gives at most the budget in pieces, then nothing until one comes back', async () => {
    const pool = new PiecePool({ pieceSize: 1024, budget: 3 * 1024, keep: 8, idleMs: 60_000 })
    const first = pool.take(2)
    expect(first.map((piece) => piece.length)).toEqual([1024, 1024])
    expect(pool.take(5)).toHaveLength(1) // what is left of the budget
    expect(pool.take(1)).toEqual([])
    expect(pool.held).toBe(3 * 1024)
    let woken = false
    pool.whenPiece(() => { woken = true })
    pool.give(first[0])
    expect(woken).toBe(true)
    const again = pool.take(1)
    expect(again[0]).toBe(first[0]) // the spare, reused
    expect(pool.held).toBe(3 * 1024)
  })

  it('wakes waiters in order, one per piece back; a forgotten piece frees its place', () => {
    const pool = new PiecePool({ pieceSize: 1024, budget: 2048, keep: 8, idleMs: 60_000 })
    const [a] = pool.take(2) // and a second, whose write will fail
    const woken = []
    pool.whenPiece(() => woken.push(1))
    pool.whenPiece(() => woken.push(2))
    pool.give(a)
    expect(woken).toEqual([1])
    pool.forget() // b's write failed: Node may still read it, it is not reused
    expect(woken).toEqual([1, 2])
    expect(pool.held).toBe(0)
    expect(pool.kept).toBe(1024)
  })

  it('passes a piece to the next waiter when one gave up', () => {
    const pool = new PiecePool({ pieceSize: 1024, budget: 1024, keep: 8, idleMs: 60_000 })
    const [a] = pool.take(1)
    const woken = []
    const gaveUp = () => woken.push('gave up')
    pool.whenPiece(gaveUp)
    pool.whenPiece(() => woken.push('waiting'))
    pool.cancelWait(gaveUp)
    pool.give(a)
    expect(woken).toEqual(['waiting'])
  })

  it('keeps at most `keep` spares, and none after an idle period', async () => {
    const pool = new PiecePool({ pieceSize: 1024, budget: 10 * 1024, keep: 2, idleMs: 20 })
    for (const piece of pool.take(4)) pool.give(piece)
    expect(pool.kept).toBe(2048)
    const deadline = Date.now() + 10_000
    while (pool.kept > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(pool.kept).toBe(0)
  })
})

describe('ZCOPY_COPY_BUDGET', () => {
  it('reads bytes, or a size with a unit (the CLI\'s: lib/size.js)', () => {
    expect(parseBudget('1048576')).toBe(2 ** 20)
    expect(parseBudget('64MiB')).toBe(64 * 2 ** 20)
    expect(parseBudget('512 kib')).toBe(512 * 1024)
    expect(parseBudget('1.5GiB')).toBe(1.5 * 2 ** 30)
    expect(parseBudget('12MB')).toBe(12e6)
    for (const bad of ['', '-1', '0', 'lots', '12XB', '1e9']) expect(parseBudget(bad)).toBeNull()
  })

  it('keeps the default, with a warning, for a value that is not a size', async () => {
    expect(copyBudget({})).toBe(DEFAULT_BUDGET)
    expect(copyBudget({ ZCOPY_COPY_BUDGET: '8MiB' })).toBe(8 * 2 ** 20)
    const warnings = []
    const onWarning = (warning) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      expect(copyBudget({ ZCOPY_COPY_BUDGET: 'plenty' })).toBe(DEFAULT_BUDGET)
    } finally {
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve))
      process.off('warning', onWarning)
    }
    expect(warnings.map((warning) => warning.code)).toEqual(['ZCOPY_BAD_COPY_BUDGET'])
  })
})
