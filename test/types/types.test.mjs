// The TypeScript declarations compile against a usage file of the whole public API,
// and the example of docs/typescript.md compiles as written.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const here = fileURLToPath(new URL('.', import.meta.url))

async function compile (project) {
  const { stdout } = await promisify(execFile)(process.execPath, [tsc, '-p', project])
    .catch((err) => ({ stdout: err.stdout + err.stderr }))
  return stdout
}

it('lib/index.d.ts types the public API', async () => {
  expect(await compile(path.join(here, 'tsconfig.json'))).toBe('')
})

it('docs/typescript.md: its example compiles', async () => {
  const page = fs.readFileSync(path.join(here, '..', '..', 'docs', 'typescript.md'), 'utf8')
  const blocks = [...page.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1])
  expect(blocks.length).toBeGreaterThanOrEqual(1)
  // Inside the package, so that 'zcopy' resolves to it as it does for usage.ts.
  const dir = fs.mkdtempSync(path.join(here, 'docs-example-'))
  try {
    blocks.forEach((code, i) => fs.writeFileSync(path.join(dir, `example-${i}.ts`), code))
    const files = blocks.map((_, i) => `example-${i}.ts`)
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', files }))
    expect(await compile(path.join(dir, 'tsconfig.json'))).toBe('')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)
