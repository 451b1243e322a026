// Every js/mjs code block of the README and docs/ runs as written against the
// packed tarball (installed with --ignore-scripts, as users get it), in a project
// that has the files the examples name (public/index.html, video.mp4, big.iso,
// key.pem...). An `<!-- example: {...} -->` comment before a block says what it
// must do; test/docs/example-harness.cjs gives it free ports instead of the ones
// it names:
//   {"get": PATH}                  an HTTP(S) server answers PATH with the file it names
//   {"connect": PORT, "expect": E} a TCP server sends E to a client, then ends
//   {"serve": PORT, "expect": E}   a client connects to a server the test runs and sends E
//   (no comment)                   the program exits 0, no error on stderr
// E lists text and file ranges: "text", ["file"], ["file", start], ["file", start, end].
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { removeTempDir } from '../support/files.mjs'
import { packAndInstall, repo } from '../support/pack.mjs'
import { codeBlocksOf } from './markdown.mjs'

const PAGES = ['README.md', ...fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const BLOCKS = PAGES.flatMap((page) => codeBlocksOf(path.join(repo, page)).map((block) => ({ page, ...block })))
const HARNESS = path.join(repo, 'test', 'docs', 'example-harness.cjs')
const FRAMEWORKS = ['express', 'koa', 'fastify']

let project
beforeAll(async () => {
  ({ project } = await packAndInstall())
  for (const name of FRAMEWORKS) fs.symlinkSync(path.join(repo, 'node_modules', name), path.join(project, 'node_modules', name))
  fs.mkdirSync(path.join(project, 'public'))
  fs.writeFileSync(path.join(project, 'public', 'index.html'), '<!doctype html><title>zcopy</title><p>hello\n')
  fs.writeFileSync(path.join(project, 'public', 'app.js'), 'console.log("app")\n')
  fs.writeFileSync(path.join(project, 'video.mp4'), crypto.randomBytes(1_000_000 + 65_537))
  fs.writeFileSync(path.join(project, 'big.iso'), crypto.randomBytes(8192))
  fs.copyFileSync(path.join(repo, 'test', 'fixtures', 'http', 'localhost-key.pem'), path.join(project, 'key.pem'))
  fs.copyFileSync(path.join(repo, 'test', 'fixtures', 'http', 'localhost-cert.pem'), path.join(project, 'cert.pem'))
}, 120_000)
afterAll(() => project && removeTempDir(project))

function expected (parts) {
  return Buffer.concat(parts.map((part) => {
    if (typeof part === 'string') return Buffer.from(part)
    const [file, start = 0, end] = part
    const bytes = fs.readFileSync(path.join(project, file))
    return bytes.subarray(start, end === undefined ? bytes.length : end + 1)
  }))
}

// Runs one block; → { child, listening: Promise<port>, exited: Promise<{ code, signal, stderr }> }
function runBlock (block, env = {}) {
  const file = path.join(project, `example-${block.line}.${block.lang}`)
  fs.writeFileSync(file, block.code)
  const child = spawn(process.execPath, ['--require', HARNESS, file], { cwd: project, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  child.stdout.resume()
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stderr })))
  const listening = new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve(port))
    exited.then(({ code, stderr }) => reject(new Error(`exited (${code}) before listening: ${stderr}`)))
  })
  listening.catch(() => {})
  return { child, listening, exited }
}

function get (port, urlPath, tls) {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: urlPath, rejectUnauthorized: false }
    const req = (tls ? https : http).get(options, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
  })
}

function readAll (socket) {
  return new Promise((resolve, reject) => {
    const chunks = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('end', () => resolve(Buffer.concat(chunks)))
    socket.on('error', reject)
  })
}

describe.each(BLOCKS.map((b) => [`${b.page}:${b.line}`, b]))('%s', (_, block) => {
  it(block.example ? `does what its comment says: ${JSON.stringify(block.example)}` : 'runs and exits 0', async () => {
    const { example } = block
    if (!example) {
      // It may say something (api.md's loadError example warns on streams, as
      // under ZCOPY_NATIVE=0), but no error, warning of Node's or stack.
      const { exited } = runBlock(block)
      expect(await exited).toEqual({ code: 0, signal: null, stderr: expect.not.stringMatching(/Error|Warning|\n\s+at /) })
      return
    }
    if (example.get) {
      const run = runBlock(block)
      const port = await run.listening
      const { status, body } = await get(port, example.get, example.tls)
      run.child.kill()
      const name = example.get.endsWith('/') ? 'index.html' : path.posix.basename(example.get)
      expect({ status, body: body.toString() }).toEqual({ status: 200, body: fs.readFileSync(path.join(project, 'public', name), 'utf8') })
      expect((await run.exited).stderr).toBe('')
    } else if (example.connect) {
      const run = runBlock(block)
      const socket = net.connect(await run.listening, '127.0.0.1')
      const received = await readAll(socket)
      run.child.kill()
      expect(received.equals(expected(example.expect))).toBe(true)
      expect((await run.exited).stderr).toBe('')
    } else if (example.serve) {
      const server = net.createServer()
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
      const first = new Promise((resolve) => server.once('connection', (socket) => resolve(readAll(socket))))
      const run = runBlock(block, { [`EXAMPLE_PORT_${example.serve}`]: String(server.address().port) })
      const received = await first
      const exit = await run.exited
      server.close()
      expect(received.equals(expected(example.expect))).toBe(true)
      expect(exit).toMatchObject({ code: 0, stderr: expect.not.stringMatching(/Error/) })
    }
  }, 30_000)
})

it('finds the examples: every js block of README.md and docs/', () => {
  expect(BLOCKS.length).toBeGreaterThanOrEqual(15)
})
