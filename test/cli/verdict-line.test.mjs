import { describe, expect, test } from 'vitest'
import { createRequire } from 'node:module'

const { verdictLine } = createRequire(import.meta.url)('../../bin/lib/bench-notes.js')

const row = (size, method, ratio) => ({ mode: 'socket', size, method, ratio })

describe("zcopy bench's verdict", () => {
  // CI of 3556002 on Node 24.21: a ratio of 0.9996 printed "1×" and read
  // "1× the speed of", a reader's (and the test's) "1× faster than".
  test.each([
    [0.9996, '1× the speed of'],
    [1.0004, '1× the speed of'],
    [0.5, '0.5× the speed of'],
    [1.01, '1.01× faster than']
  ])('a ratio of %d reads %j', (ratio, words) => {
    const line = verdictLine({ results: [row(65536, 'zcopy', ratio), row(65536, 'stream', 1)] })
    expect(line).toBe(`zcopy moved 64 KiB over a socket ${words} the stream pipe: on this machine, in this run`)
  })
})
