// Each fact once (issue 63): the content codings and their file suffixes are
// one table (lib/http/representation/codings.js), Accept-Encoding is
// negotiated by one function (accept-encoding.js), a file's identity is
// compared by one sameFile (lib/http/files/stat.js), size strings are parsed
// by one parser (lib/size.js), and Content-Disposition comes from the
// content-disposition package, not a copy of it; whether a step's result is
// still to come is told by one helper (lib/http/serving/now-or-later.js). A second copy of any of them
// fails here, by its source or by its behaviour.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { jsFilesUnder } from './support/files.mjs'

const require = createRequire(import.meta.url)
const root = new URL('..', import.meta.url).pathname
const relative = (file) => path.relative(root, file).split(path.sep).join('/')
// Each .js file of `dirs` → its code without // comments.
const codeOf = (dirs) => dirs.flatMap((dir) => jsFilesUnder(path.join(root, dir)))
  .map((file) => ({ name: relative(file), code: fs.readFileSync(file, 'utf8').replace(/(^|[^:'"\\])\/\/.*$/gm, '$1') }))

const lib = codeOf(['lib'])
// The files of `files` whose code matches `pattern`, but for those in `allowed`.
const holders = (files, pattern, allowed = []) => files.filter(({ name, code }) => pattern.test(code) && !allowed.includes(name)).map(({ name }) => name)

const CODINGS_FILE = 'lib/http/representation/codings.js'

describe('the content codings', () => {
  const { CODINGS, acceptedCodings, codingNames, suffixOf, siblingNames } = require('../lib/http/representation/index.js')

  it('have their suffixes written in one table', () => {
    expect(holders(lib, /['"`]\.(br|gz|zst|deflate)['"`]/, [CODINGS_FILE])).toEqual([])
    expect(CODINGS.map(({ name, suffix }) => [name, suffix])).toEqual([['br', '.br'], ['zstd', '.zst'], ['gzip', '.gz'], ['deflate', '.deflate']])
  })

  it('are listed in no other order than the table\'s (a list of names is a choice from it)', () => {
    const list = /(?<!codingNames\()\[\s*'(br|gzip|zstd|deflate)'\s*,\s*'(br|gzip|zstd|deflate)'/
    expect(holders(lib, list, [CODINGS_FILE])).toEqual([])
  })

  it('are negotiated in one place', () => {
    expect(holders(lib, /require\(\s*'negotiator(\/[^']*)?'\s*\)/, ['lib/http/representation/accept-encoding.js'])).toEqual([])
    expect(holders(lib, /new\s+Negotiator\b/, ['lib/http/representation/accept-encoding.js'])).toEqual([])
    expect(holders(lib, /require\(\s*'negotiator\/[^']*'\s*\)/)).toEqual([]) // its public API, not its files
    expect(acceptedCodings('gzip, br;q=0.5, *;q=0', ['br', 'gzip', 'identity'])).toEqual(['gzip', 'br'])
    expect(acceptedCodings('gzip, br', ['br', 'gzip', 'identity'])).toEqual(['br', 'gzip', 'identity'])
    expect(acceptedCodings(undefined, ['br', 'identity'])).toEqual(['identity'])
  })

  it('drive the precompressed siblings', () => {
    const sent = codingNames(['br', 'gzip'])
    expect(siblingNames('/srv/app.js')).toEqual(sent.map((name) => '/srv/app.js' + suffixOf(name)))
  })

  it('drive compress: the codings it makes, in the table\'s order, and its variants\' names', () => {
    const { compressOptions } = require('../lib/http/compress/index.js')
    const { Variant } = require('../lib/http/compress/variants.js')
    const { encodings } = compressOptions({ encodings: ['gzip', 'zstd', 'br'], cacheDir: false })
    expect(encodings).toEqual(codingNames(encodings))
    expect(encodings).toEqual(codingNames(['br', 'zstd', 'gzip']).filter((name) => encodings.includes(name)))
    const record = { path: '/srv/app.js', stat: { dev: 1, ino: 2, ctimeMs: 3 } }
    for (const name of encodings) {
      const variant = new Variant(record, name, 10, false)
      expect(variant.name).toBe('/srv/app.js' + suffixOf(name))
      expect(variant.fileName().endsWith(suffixOf(name))).toBe(true)
    }
  })
})

describe('one of each helper', () => {
  it('sameFile is defined once, in lib/http/files/stat.js', () => {
    expect(holders(lib, /function\s+sameFile\b|sameFile\s*=\s*(\(|function)/)).toEqual(['lib/http/files/stat.js'])
  })

  it('size strings have one parser, lib/size.js, and its unit table', () => {
    const units = /\b(kib|KIB|KiB)\s*:/
    expect(holders([...lib, ...codeOf(['tools'])], units)).toEqual(['lib/size.js'])
    const { parseBudget } = require('../lib/engine/copy/copy-budget.js')
    const { parseSize } = require('../tools/size.js')
    for (const text of ['1', '512B', '4KiB', '4K', '4KB', '1.5MiB', '12MB', '2 GB', '1TiB', ' 64MiB ']) {
      expect(parseBudget(text)).toBe(parseSize(text))
    }
  })

  it('Content-Disposition comes from the content-disposition package', () => {
    expect(fs.existsSync(path.join(root, 'lib/adapters/fastify/content-disposition.js'))).toBe(false)
    expect(holders(lib, /require\(\s*'content-disposition'\s*\)/)).toEqual(['lib/adapters/fastify.js'])
    expect(require('../package.json').dependencies).toHaveProperty('content-disposition')
  })

  it('a step\'s result still to come (a Promise) is told in one place, lib/http/serving/now-or-later.js', () => {
    expect(holders(lib, /instanceof\s+Promise|typeof\s+[\w.]+\.then\b/, ['lib/http/serving/now-or-later.js'])).toEqual([])
    const { andThen, isLater } = require('../lib/http/serving/now-or-later.js')
    expect(andThen(2, (n) => n + 1)).toBe(3)
    expect(isLater(andThen(Promise.resolve(2), (n) => n + 1))).toBe(true)
  })
})
