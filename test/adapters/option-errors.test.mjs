// One options normalizer (issue 63): serveStatic, sendFile, zcopy/koa and
// zcopy/fastify reject the same bad option with the same error, a TypeError or
// RangeError naming the option, what it must be and what it got. Real calls:
// sendFile from a real server's request handler, Koa's middleware made,
// Fastify's plugin registered (ready() rejects with the error).
//
// The options here are those all four take and check alike. Left out: each
// adapter's own (koa's `defer`, `extensions` without a bare string; Fastify's
// `setHeaders`, `wildcard`, `list`, `root`, which keep @fastify/static's
// FST_STATIC_* errors), and `precompressed`, which Fastify spells `preCompressed`.
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, test } from 'vitest'
import zcopy from 'zcopy'
import serve from 'zcopy/koa'
import zcopyFastify from 'zcopy/fastify'
import { listen, request } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

// [options, the error's class, its message]
const CASES = [
  [{ dotfiles: 'sometimes' }, TypeError, "options.dotfiles must be 'allow', 'deny' or 'ignore', got 'sometimes'"],
  [{ index: [1] }, TypeError, 'options.index must be a string, an array of strings or false, got [ 1 ]'],
  [{ onSent: 1 }, TypeError, 'options.onSent must be a function, got 1'],
  [{ maxOpenFiles: -1 }, TypeError, 'options.maxOpenFiles must be a non-negative integer, got -1'],
  [{ memoryCache: 1.5 }, TypeError, 'options.memoryCache must be a non-negative integer, got 1.5'],
  [{ maxWatches: '10' }, TypeError, "options.maxWatches must be a non-negative integer, got '10'"],
  [{ compress: 'yes' }, TypeError, "options.compress must be a boolean or an object, got 'yes'"],
  [{ compress: { level: 3 } }, TypeError,
    'options.compress.level must be left out (the settings are encodings, types, threshold, maxSize, cacheDir, cacheBytes, concurrency, cpuBudget), got 3'],
  [{ compress: { threshold: -1 } }, RangeError, 'options.compress.threshold must be an integer of at least 0, got -1'],
  [{ compress: { threshold: 1.5 } }, TypeError, 'options.compress.threshold must be an integer of at least 0, got 1.5'],
  [{ compress: { maxSize: 100, threshold: 1000 } }, RangeError, 'options.compress.maxSize must be at least options.compress.threshold (1000), got 100'],
  [{ compress: { encodings: 'br' } }, TypeError, "options.compress.encodings must be an array of 'br', 'zstd', 'gzip', got 'br'"],
  [{ compress: { encodings: ['deflate'] } }, RangeError, "options.compress.encodings must be an array of 'br', 'zstd', 'gzip', got [ 'deflate' ]"],
  [{ compress: { cacheDir: 3 } }, TypeError, 'options.compress.cacheDir must be a path or false, got 3'],
  [{ compress: { types: ['text/*', 'nonsense'] } }, TypeError,
    "options.compress.types[1] must be a media type or a pattern ('text/*', 'application/*+json'), got 'nonsense'"]
]

let root, server
const sendFileErrors = new Map() // case number → what sendFile threw

beforeAll(async () => {
  root = makeTempDir()
  server = await listen((req, res) => {
    const index = Number(req.url.slice(1))
    try {
      zcopy.sendFile(req, res, 'hello.txt', { root, ...CASES[index][0] })
    } catch (err) {
      sendFileErrors.set(index, err)
    }
    res.statusCode = 500
    res.end()
  })
})

afterAll(async () => {
  await server?.close()
  if (root) removeTempDir(root)
})

// → what `call` threw (or the promise it returned rejected with), or null.
async function errorOf (call) {
  try {
    await call()
    return null
  } catch (err) {
    return err
  }
}

async function fastifyError (options) {
  const app = Fastify()
  app.register(zcopyFastify, { root, ...options })
  try {
    return await errorOf(() => app.ready())
  } finally {
    await app.close().catch(() => {})
  }
}

const shape = (err) => err === null ? null : { class: err.constructor, message: err.message }

test.each(CASES.map((c, i) => [JSON.stringify(c[0]), i]))('%s: one error from every entry point', async (_, index) => {
  const [options, Kind, message] = CASES[index]
  await request(server.port, `/${index}`)
  const errors = {
    serveStatic: shape(await errorOf(() => zcopy.serveStatic(root, options))),
    sendFile: shape(sendFileErrors.get(index) ?? null),
    koa: shape(await errorOf(() => serve(root, options))),
    fastify: shape(await fastifyError(options))
  }
  const expected = { class: Kind, message }
  expect(errors).toEqual({ serveStatic: expected, sendFile: expected, koa: expected, fastify: expected })
})
