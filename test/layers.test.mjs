// The module map of docs/internals.md, checked: a layer of lib/ (lib/engine/,
// lib/http/) is entered only through its index.js, and imports go one way
// (lib/engine knows nothing above it, lib/http nothing of the adapters, the CLI
// or the benchmarks; lib/ and tools/ nothing of bin/ or bench/). Tests may
// reach into a layer's files; the code may not.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { jsFilesUnder } from './support/files.mjs'

const root = new URL('..', import.meta.url).pathname
// lib/http's folders, each a concern entered by its index.js (docs/internals.md).
const HTTP_FOLDERS = ['common', 'target', 'files', 'representation', 'delivery', 'compress', 'protect', 'serving'].map((name) => `lib/http/${name}`)
// lib/engine's folders: the copy through user space (lib/engine/copy).
const ENGINE_FOLDERS = ['lib/engine/copy']
const LAYERS = ['lib/engine', ...ENGINE_FOLDERS, 'lib/http', ...HTTP_FOLDERS, 'lib/lane']
// lib/http's entry points (its door, the serving and protect folders): what
// the other folders serve, never what they import.
const HTTP_ENTRY_POINTS = ['lib/http/index.js', 'lib/http/serving', 'lib/http/protect']

// Where each folder may not reach (beyond a layer's files, checked for all).
const NEVER = {
  'lib/engine': ['lib/http', 'lib/lane', 'lib/adapters', 'lib/index.js', 'bin', 'tools', 'bench'],
  'lib/http': ['lib/lane', 'lib/adapters', 'lib/index.js', 'bin', 'tools', 'bench'],
  // The lane in front of a server: below the public index, beside the adapters.
  'lib/lane': ['lib/adapters', 'lib/index.js', 'bin', 'tools', 'bench'],
  'lib/adapters': ['bin', 'tools', 'bench'],
  tools: ['bin', 'bench'],
  bin: ['bench'],
  // The one size parser, shared by lib/http and tools/: it imports nothing.
  'lib/size.js': ['lib', 'bin', 'tools', 'bench'],
  // The folders, lowest first: each knows nothing of those above it.
  'lib/http/common': ['lib/http/files', 'lib/http/target', 'lib/http/representation', 'lib/http/delivery', 'lib/http/compress', ...HTTP_ENTRY_POINTS],
  'lib/http/files': ['lib/http/target', 'lib/http/representation', 'lib/http/delivery', 'lib/http/compress', ...HTTP_ENTRY_POINTS],
  'lib/http/target': ['lib/http/representation', 'lib/http/delivery', 'lib/http/compress', ...HTTP_ENTRY_POINTS],
  'lib/http/representation': ['lib/http/target', 'lib/http/delivery', 'lib/http/compress', ...HTTP_ENTRY_POINTS],
  'lib/http/delivery': ['lib/http/files', 'lib/http/target', 'lib/http/representation', 'lib/http/compress', ...HTTP_ENTRY_POINTS],
  'lib/http/compress': ['lib/http/target', 'lib/http/delivery', ...HTTP_ENTRY_POINTS],
  'lib/http/protect': ['lib/http/files', 'lib/http/target', 'lib/http/representation', 'lib/http/delivery', 'lib/http/compress', 'lib/http/serving', 'lib/http/index.js']
}

const relative = (file) => path.relative(root, file).split(path.sep).join('/')
const inside = (file, dir) => file === dir || file.startsWith(dir + '/')

// The repository files a module requires by a relative path, as paths from the root.
function localRequires (file) {
  const code = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
  return [...code.matchAll(/require\(\s*'(\.{1,2}\/[^']*)'\s*\)/g)].map((match) => {
    const target = path.resolve(path.dirname(file), match[1])
    for (const candidate of [target, target + '.js', path.join(target, 'index.js')]) {
      if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return relative(candidate)
    }
    return relative(target)
  })
}

const files = ['lib', 'bin', 'tools', 'bench'].flatMap((dir) => jsFilesUnder(path.join(root, dir)))

describe('the module map', () => {
  for (const file of files) {
    const name = relative(file)
    it(`${name} enters other layers through their index.js, and only downwards`, () => {
      const wrong = []
      for (const target of localRequires(file)) {
        for (const layer of LAYERS) {
          if (inside(target, layer) && !inside(name, layer) && target !== `${layer}/index.js`) wrong.push(`${target} (enter ${layer} by its index.js)`)
        }
        for (const [dir, never] of Object.entries(NEVER)) {
          if (!inside(name, dir)) continue
          for (const above of never) if (inside(target, above)) wrong.push(`${target} (${dir} never imports ${above})`)
        }
      }
      expect(wrong).toEqual([])
    })
  }
})

// The addon is reached through lib/engine's named calls alone
// (lib/engine/addon-calls.js): no layer above takes the addon object and calls
// into it, or loads the binary itself (node-gyp-build, a .node file; its
// binding.js is kept out by the module map above), so that the engine is the
// one owner of what the addon does.
describe('the addon', () => {
  const require = createRequire(import.meta.url)
  it('lib/engine exports named calls, never the addon object', () => {
    const engine = require('../lib/engine/index.js')
    const { native } = require('../lib/engine/binding.js')
    expect(Object.keys(engine)).not.toContain('native')
    if (native !== null) expect(Object.values(engine)).not.toContain(native)
  })
  for (const file of files) {
    const name = relative(file)
    if (inside(name, 'lib/engine')) continue
    it(`${name} calls no addon object, and loads no addon of its own`, () => {
      const code = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
      expect(code.match(/\bnative\s*(\?\.|\.|\[)|\{[^}]*\bnative\b[^}]*\}\s*=\s*require/g)).toBeNull()
      expect(code.match(/require\(\s*'(node-gyp-build|[^']*\.node)'\s*\)/g)).toBeNull()
    })
  }
})

// The open-file cache's entries are its own (lib/http/files/open-file.js):
// outside lib/http/files, code reads the four fields an entry's holder may
// read and calls its methods; it writes none (the cache's interface does).
describe('the open-file cache owns its entries', () => {
  const READABLE = new Set(['path', 'fd', 'stat', 'proof', 'isOpen'])
  for (const file of files) {
    const name = relative(file)
    if (!inside(name, 'lib') || inside(name, 'lib/http/files')) continue
    it(`${name} reads only an entry's path, fd, stat, proof, and writes none of its fields`, () => {
      const code = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
      const uses = [...code.matchAll(/\bentry\.([A-Za-z_$][\w$]*)(\s*(?:[-+*/|&]?=(?!=)|\+\+|--))?/g)]
      const wrong = uses.filter(([, field, write]) => write !== undefined || !READABLE.has(field)).map(([use]) => use.trim())
      expect(wrong).toEqual([])
    })
  }
})

// How a body moves is the engine's to decide (lib/engine/destination.js,
// movesByZeroCopy): the HTTP layer and the adapters say what a destination
// allows and never consult whether the addon loaded to pick sendfile or a copy
// themselves.
describe('the choice of zero-copy or a copy', () => {
  for (const file of files) {
    const name = relative(file)
    if (!inside(name, 'lib/http') && !inside(name, 'lib/adapters')) continue
    it(`${name} leaves it to the engine`, () => {
      const code = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
      expect(code.match(/\b(zeroCopyAvailable|supportsZeroCopy)\b/g)).toBeNull()
    })
  }
})

// The engine is the one place that moves bytes (docs/internals.md, "Who moves
// the bytes"): above it nothing reads a file's descriptor itself (fs.read,
// fs.readv, fs.readSync, their promise forms), nor keeps read buffers of its
// own for a copy; it asks the engine (copy, readAt, readRange, readAtSync).
// Whole small files read by path (readFileSync of /proc) are no descriptor
// range.
describe('one owner of how bytes move', () => {
  for (const file of files) {
    const name = relative(file)
    if (!inside(name, 'lib') || inside(name, 'lib/engine')) continue
    it(`${name} reads no descriptor range itself`, () => {
      const code = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
      expect(code.match(/\b(fs|fsp|fs\.promises)\.(read|readv|readSync|readvSync)\b|promisify\(\s*fs\.readv?\s*\)|\.read\(\s*\w*[fF]d\b/g)).toBeNull()
    })
  }
  it('lib/http/delivery holds no piece pool and no copy loop of its own', () => {
    const delivery = jsFilesUnder(path.join(root, 'lib/http/delivery')).map((file) => fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, ''))
    for (const code of delivery) {
      expect(code.match(/\b(PiecePool|allocUnsafeSlow|readv|pool\.take|whenPiece)\b/g)).toBeNull()
    }
    for (const gone of ['piece-pool', 'shared-pieces', 'copy-budget', 'flight']) {
      expect(fs.existsSync(path.join(root, 'lib/http/delivery', `${gone}.js`))).toBe(false)
    }
  })
})
