// The adapters as users get them: by package name through package.json "exports",
// from plain Node ESM and CJS (not through vitest's module loader), with types;
// and serveStatic's options argument: omitted, undefined and null all mean the
// defaults.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import http from 'node:http'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zcopy from 'zcopy'
import { removeTempDir } from '../support/files.mjs'
import { makeTree, request } from './helpers.mjs'

const run = promisify(execFile)
const cwd = fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)

let tree
beforeAll(() => { tree = makeTree() })
afterAll(() => removeTempDir(tree.root))

it('plain Node ESM: import serve from \'zcopy/koa\', import plugin from \'zcopy/fastify\'', async () => {
  const source = [
    "import serve from 'zcopy/koa'",
    "import plugin from 'zcopy/fastify'",
    "import { createRequire } from 'node:module'",
    'const require = createRequire(import.meta.url)',
    "console.log(JSON.stringify([typeof serve, serve === require('zcopy/koa'), typeof plugin, plugin === require('zcopy/fastify'), plugin[Symbol.for('skip-override')] === true]))"
  ].join('\n')
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', source], { cwd })
  expect(JSON.parse(stdout)).toEqual(['function', true, 'function', true, true])
})

it('plain Node CJS: require(\'zcopy/koa\') and require(\'zcopy/fastify\')', () => {
  const serve = require('zcopy/koa')
  const plugin = require('zcopy/fastify')
  expect(typeof serve).toBe('function')
  expect(serve.default).toBe(serve)
  expect(typeof plugin).toBe('function')
  expect(plugin.default).toBe(plugin)
  expect(plugin[Symbol.for('fastify.display-name')]).toBe('zcopy-fastify')
})

it('the declarations type both entry points from ESM and CJS TypeScript', async () => {
  const tsc = require.resolve('typescript/bin/tsc')
  const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url))
  const { stdout } = await run(process.execPath, [tsc, '-p', project], { cwd })
    .catch((err) => ({ stdout: err.stdout + err.stderr }))
  expect(stdout).toBe('')
}, 120_000)

it('serveStatic(root), (root, undefined) and (root, null) all mean the defaults', async () => {
  const middlewares = [zcopy.serveStatic(tree.root), zcopy.serveStatic(tree.root, undefined), zcopy.serveStatic(tree.root, null)]
  const answers = []
  for (const middleware of middlewares) {
    const server = http.createServer((req, res) => middleware(req, res, (err) => {
      res.statusCode = err ? err.status : 404
      res.end(err ? 'error' : 'next')
    }))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address()
    const file = await request(port, '/hello.txt')
    answers.push({
      file: [file.status, file.body.toString(), file.headers['cache-control'], file.headers['accept-ranges'], Boolean(file.headers.etag)],
      index: (await request(port, '/dir/')).body.toString(),
      redirect: (await request(port, '/dir')).headers.location,
      dotfile: (await request(port, '/.secret')).body.toString(), // ignore → next()
      post: (await request(port, '/hello.txt', { method: 'POST' })).body.toString() // fallthrough → next()
    })
    server.close()
    await middleware.close()
  }
  expect(answers[0]).toEqual({
    file: [200, 'hello, adapters\n', 'public, max-age=0', 'bytes', true],
    index: '<p>index</p>\n',
    redirect: '/dir/',
    dotfile: 'next',
    post: 'next'
  })
  expect(answers[1]).toEqual(answers[0])
  expect(answers[2]).toEqual(answers[0])
})

it('serveStatic rejects options that are not an object, and a missing root', () => {
  expect(() => zcopy.serveStatic(tree.root, 'nope')).toThrow(TypeError)
  expect(() => zcopy.serveStatic(tree.root, 42)).toThrow(TypeError)
  expect(() => zcopy.serveStatic()).toThrow(TypeError)
  expect(() => zcopy.serveStatic(null, null)).toThrow(TypeError)
})

// TypeScript's classic CommonJS set-up ("module": "commonjs", node10 resolution)
// ignores "exports": typesVersions points it at the adapters' declarations. A
// project of its own, with zcopy in its node_modules (a link to this package).
it('the declarations type both entry points under "module": "commonjs" (node10 resolution) too', async () => {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-ts-node10-'))
  try {
    const repo = fileURLToPath(new URL('../..', import.meta.url))
    fs.mkdirSync(path.join(project, 'node_modules'))
    fs.symlinkSync(repo, path.join(project, 'node_modules', 'zcopy'), 'dir')
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'commonjs',
        moduleResolution: 'node10',
        target: 'es2022',
        types: ['node'],
        typeRoots: [path.join(repo, 'node_modules', '@types')],
        skipLibCheck: true,
        ignoreDeprecations: '5.0'
      },
      files: ['usage.ts']
    }))
    fs.writeFileSync(path.join(project, 'usage.ts'), [
      "import zcopy = require('zcopy')",
      "import serve = require('zcopy/koa')",
      "import zcopyFastify = require('zcopy/fastify')",
      "const middleware: serve.Middleware = serve('/srv/www', { defer: true })",
      'const available: boolean = zcopy.zeroCopyAvailable',
      'export { middleware, available, zcopyFastify }',
      ''
    ].join('\n'))
    const tsc = require.resolve('typescript/bin/tsc')
    const { stdout } = await run(process.execPath, [tsc, '-p', project], { cwd: project })
      .catch((err) => ({ stdout: err.stdout + err.stderr }))
    expect(stdout).toBe('')
  } finally {
    fs.rmSync(project, { recursive: true, force: true })
  }
}, 120_000)
