'use strict'

// `zcopy serve` owns its process, so it sets what the library cannot: the
// ceiling of V8's young generation. Clients that stop reading keep their
// responses' objects alive across collections, and V8 answers survivors by
// doubling the young generation up to its default ceiling (32 MiB on Node 20
// and 22, 128 MiB on Node 24 on this 24 GiB machine), committed for as long
// as they stall: 17–18 KiB of the 94 a stalled TLS client cost (docs/internals.md,
// "V8's young generation"). `node --max-semi-space-size=4` sets an 8 MiB
// ceiling, but V8 reads it only when it starts. The growth factor it reads at
// every growth: after each collection it is set to 1 once the new space's
// capacity is past half the ceiling (the next doubling would reach it), and
// back to V8's default of 2 below (V8 shrinks the new space when the
// allocation rate falls), so the new space grows as it would up to the ceiling.
// What is compared is the capacity V8 has set, not the bytes it has committed:
// after a full collection Node 20 releases the idle semi-space (4 of 8 MiB
// committed), which read as room to grow and doubled the new space to 16 MiB
// in 1 run of 10 of test/fixtures/cli/survivors.cjs; V8 14 (Node 26) commits
// the new space a page at a time toward its capacity. The capacity is the
// semi-space being allocated in (its used and available bytes) twice over, on
// every line from Node 20 to 26.
//
// A semi-space flag of the user's own (on the command line or in
// NODE_OPTIONS) wins: nothing is set then.

const v8 = require('node:v8')
const { PerformanceObserver } = require('node:perf_hooks')

const NEW_SPACE_CEILING = 8 * 2 ** 20 // two semi-spaces of 4 MiB, as `--max-semi-space-size=4`
const DEFAULT_GROWTH_FACTOR = 2
const USER_FLAG = /--(?:max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/

function chosenByUser () {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => USER_FLAG.test(arg))
}

// → the new space's capacity (both semi-spaces), or null where V8 has none by that name.
function newSpaceCapacity () {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
  return space === undefined ? null : 2 * (space.space_used_size + space.space_available_size)
}

// Holds the new space at NEW_SPACE_CEILING from now on, unless the user chose its size.
function capYoungGeneration () {
  if (chosenByUser() || newSpaceCapacity() === null) return
  let growing = true
  const observer = new PerformanceObserver(() => {
    const grow = newSpaceCapacity() <= NEW_SPACE_CEILING / 2
    if (grow === growing) return
    growing = grow
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? DEFAULT_GROWTH_FACTOR : 1}`)
  })
  observer.observe({ entryTypes: ['gc'] })
}

module.exports = { capYoungGeneration }
