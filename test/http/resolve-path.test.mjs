// serveStatic resolves request paths through a bounded memory of earlier answers:
// a remembered answer must be the one resolvePath gives, refusals are never
// remembered, and the memory stays within its bound.
import path from 'node:path'
import { expect, test } from 'vitest'
import { pathResolver, resolvePath } from '../../lib/http/target/resolve-path.js'

const ROOT = path.resolve('/srv/www')

test('answers as decode + resolvePath, the same frozen answer each time', () => {
  const resolve = pathResolver(ROOT, 'ignore')
  const first = resolve('/dir/caf%C3%A9%20au%20lait.txt')
  expect(first).toEqual(resolvePath(ROOT, '/dir/café au lait.txt', 'ignore'))
  expect(Object.isFrozen(first)).toBe(true)
  expect(resolve('/dir/caf%C3%A9%20au%20lait.txt')).toBe(first)
  expect(resolve('/dir/')).toEqual({ path: path.join(ROOT, 'dir') + path.sep, trailingSlash: true })
})

test('refusals are thrown every time, never remembered', () => {
  const resolve = pathResolver(ROOT, 'deny')
  for (let attempt = 0; attempt < 2; attempt++) {
    expect(() => resolve('/%2e%2e/secret')).toThrow(expect.objectContaining({ status: 403 }))
    expect(() => resolve('/%zz')).toThrow(expect.objectContaining({ status: 400 }))
    expect(() => resolve('/.env')).toThrow(expect.objectContaining({ status: 403 }))
  }
})

test('a flood of distinct paths restarts the memory instead of growing it', () => {
  const resolve = pathResolver(ROOT, 'ignore', 4)
  const first = resolve('/a')
  for (let i = 0; i < 3; i++) resolve(`/flood-${i}`)
  expect(resolve('/a')).toBe(first) // still within the bound
  resolve('/flood-3') // the fifth distinct path: the memory starts over
  const again = resolve('/a')
  expect(again).not.toBe(first)
  expect(again).toEqual(first)
})
