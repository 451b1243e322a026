import { describe, expect, test } from 'vitest'
import { createRequire } from 'node:module'

const { parseSize, parseSizeList, formatSize } = createRequire(import.meta.url)('../../tools/size.js')

describe('sizes', () => {
  test.each([
    ['1', 1], ['512B', 512], ['4KiB', 4096], ['4kib', 4096], ['4K', 4096], ['4KB', 4000],
    ['1.5MiB', 1572864], ['1MB', 1e6], ['1GiB', 2 ** 30], ['2 GB', 2e9], ['1TiB', 2 ** 40]
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes)
  })

  test.each(['12XB', '-1', '0', '0.1B', 'KiB', '1e3', '', '4 KiB extra'])('%j is rejected', (text) => {
    expect(() => parseSize(text)).toThrow(expect.objectContaining({ name: 'UsageError' }))
  })

  test('lists keep order and drop duplicates', () => {
    expect(parseSizeList('1MiB, 4KiB,1024KiB')).toEqual([1048576, 4096])
  })

  test.each([[1000, '1000 B'], [4096, '4 KiB'], [1536, '1.5 KiB'], [2 ** 30, '1 GiB'], [65537, '64 KiB']])('%d formats as %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text)
  })
})
