// The open-file cache's default size follows the process's descriptor limit.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { expect, test } from 'vitest'

const require = createRequire(import.meta.url)
const { defaultMaxOpenFiles, readDescriptorLimit } = require('../../lib/http/files/descriptor-limit.js')
const modulePath = require.resolve('../../lib/http/files/descriptor-limit.js')

test('a quarter of the limit, between 128 and 8192', () => {
  expect(defaultMaxOpenFiles(20_000)).toBe(5000)
  expect(defaultMaxOpenFiles(1024)).toBe(256)
  expect(defaultMaxOpenFiles(256)).toBe(128)
  expect(defaultMaxOpenFiles(1_048_576)).toBe(8192)
  expect(defaultMaxOpenFiles(null)).toBe(128)
})

test('the limit is read from the running process', () => {
  const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(modulePath)}).readDescriptorLimit()))`
  const out = execFileSync('/bin/sh', ['-c', `ulimit -n 1000 && exec "${process.execPath}" -e '${script}'`], { encoding: 'utf8' })
  expect(JSON.parse(out)).toBe(1000)
  expect(readDescriptorLimit()).toBeGreaterThan(0)
})
