// The one options normalizer's output (lib/http/serving/options.js) is frozen plain
// data: the option values and the caller's functions. The collaborators made
// of it (the open-file cache, the variant store, an adapter's delivery) are
// handed to the handler beside it (lib/http/serving/stack.js), never put inside it.
import { createRequire } from 'node:module'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const require = createRequire(import.meta.url)
const { createStaticHandler } = require('../../lib/http/index.js')
const { normalizeOptions } = require('../../lib/http/serving/options.js')
const KEYS = Object.keys(normalizeOptions()).sort()

let root
beforeAll(() => { root = makeTempDir() })
afterAll(() => removeTempDir(root))

// Whether `value` is frozen plain data: a primitive, a function, or a frozen
// array or plain object of such.
function plain (value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return true
  if (typeof value === 'function') return true
  const proto = Object.getPrototypeOf(value)
  if (!Object.isFrozen(value) || (proto !== Object.prototype && proto !== Array.prototype)) return false
  return Object.values(value).every(plain)
}

test.each([
  ['defaults', {}, {}],
  ['compress', { compress: true, setHeaders () {}, onSent () {}, extensions: ['html'], index: 'home.html' }, {}],
  ["an adapter's delivery", { compress: { cacheDir: false } }, { delivery: Object.freeze({ handsOver: true, none () {} }) }]
])('%s: the options are frozen plain data, the same keys, no collaborator in them', async (_, options, how) => {
  const handler = createStaticHandler(root, options, how)
  try {
    expect(plain(handler.options)).toBe(true)
    expect(Object.keys(handler.options).sort()).toEqual(KEYS)
    if (options.compress) expect(handler.variants).not.toBeNull()
  } finally {
    await handler.close()
  }
})
