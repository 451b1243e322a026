// The TypeScript declarations compile against a usage file of the whole public API.
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const project = fileURLToPath(new URL('./tsconfig.json', import.meta.url))

it('lib/index.d.ts types the public API', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [tsc, '-p', project])
    .catch((err) => ({ stdout: err.stdout + err.stderr }))
  expect(stdout).toBe('')
})
