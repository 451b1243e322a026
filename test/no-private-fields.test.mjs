// zcopy talks to Node through public API. The one private field it reads is a
// socket's `_handle.fd` (Node has no public way to the descriptor under a
// net.Socket), in lib/engine/destination.js, checked before use. The underscored
// methods of stream implementers (_read, _write...) are public API.
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { jsFilesUnder } from './support/files.mjs'

const root = new URL('..', import.meta.url).pathname
const PRIVATE = /\.(_[A-Za-z]\w*)/g
const IMPLEMENTER_API = ['_read', '_write', '_writev', '_final', '_destroy', '_construct', '_transform', '_flush']
const ALLOWED = new Map([['lib/engine/destination.js', new Set(['_handle'])]])

describe('Node private fields', () => {
  for (const file of [...jsFilesUnder(join(root, 'lib')), ...jsFilesUnder(join(root, 'bin')), ...jsFilesUnder(join(root, 'tools'))]) {
    const name = relative(root, file)
    it(`${name} reads none but the allowed`, () => {
      const code = readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '')
      const used = [...code.matchAll(PRIVATE)].map((match) => match[1])
      const allowed = ALLOWED.get(name) ?? new Set()
      const unexpected = used.filter((field) => !allowed.has(field) && !IMPLEMENTER_API.includes(field))
      expect(unexpected).toEqual([])
    })
  }
})
