import { afterAll, afterEach, describe, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { makeRoot, startServe } from './serve-helpers.mjs'
import { waitForStderr, waitForStdout } from './cli.mjs'

const SPINNERS = fileURLToPath(new URL('../fixtures/cli/spinners.cjs', import.meta.url))
const big = crypto.randomBytes(16 * 1024 * 1024)
// 4 MiB of JavaScript whose string literals are random hex: brotli takes
// about a second of CPU over it (words repeated would take a tenth of that).
const app = crypto.randomBytes(2 * 1024 * 1024).toString('hex').replace(/.{64}/g, (hex, at) => `export const k${at} = '${hex}'\n`)
const root = makeRoot({ 'big.bin': big, 'hello.txt': 'hello\n', 'app.js': app })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// The process groups of the servers a test started, killed after it even when
// it failed or timed out.
const started = []
afterEach(() => {
  for (const pid of started.splice(0)) {
    try { process.kill(-pid, 'SIGKILL') } catch {}
  }
})

// A GET whose body is not read until `resume()`: the transfer stays in flight.
async function slowGet (url) {
  const req = http.get(url, { agent: false })
  const [res] = await once(req, 'response')
  res.pause()
  const chunks = []
  const done = new Promise((resolve, reject) => {
    res.on('data', (chunk) => chunks.push(chunk))
    res.on('end', () => resolve(Buffer.concat(chunks)))
    res.on('error', reject)
    res.on('aborted', () => reject(new Error('aborted')))
  })
  done.catch(() => {})
  return { res, done, resume: () => res.resume() }
}

describe('zcopy serve: graceful shutdown', () => {
  test('SIGTERM: new connections refused, the download in flight completes, exit code 0', async () => {
    const server = await startServe(root, ['--quiet'])
    const download = await slowGet(new URL('big.bin', server.url))
    server.cli.child.kill('SIGTERM')
    await waitForStdout(server.cli, /stopping/)
    await expect(fetch(server.url)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } })
    download.resume()
    const body = await download.done
    expect(body.equals(big)).toBe(true)
    const { code, stderr } = await server.cli.output()
    expect(code).toBe(0)
    expect(stderr).toBe('')
  })

  test('SIGINT with --shutdown-timeout 0.3: a stalled download is cut, exit code 0', async () => {
    const server = await startServe(root, ['--quiet', '--shutdown-timeout', '0.3'])
    const download = await slowGet(new URL('big.bin', server.url))
    const started = Date.now()
    server.cli.child.kill('SIGINT')
    const { code } = await server.cli.output()
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(3000)
    download.resume()
    await expect(download.done).rejects.toThrow()
  })

  test('a compression under way does not hold the stop back', async () => {
    const server = await startServe(root, ['--quiet', '--shutdown-timeout', '0'], { env: { NODE_OPTIONS: `--require ${SPINNERS}` } })
    started.push(server.cli.child.pid)
    const first = await fetch(new URL('app.js', server.url), { headers: { 'accept-encoding': 'br' } })
    await first.arrayBuffer()
    await compressing(server.cli.child.pid, Buffer.byteLength(app))
    // Its compression has read the file and is compressing it. Every CPU kept
    // busy now, by the server's own children: in the idle class, it cannot end
    // for 10 s at least (then it is hurried, and still takes seconds).
    server.cli.child.kill('SIGUSR2')
    await waitForStderr(server.cli, /spinning/)
    // The server's exit, not the end of its stderr: the compression process,
    // killed as the server exits, shares that pipe and, in the idle class on
    // CPUs this busy, can take seconds more to be scheduled to die (measured
    // under three more busy loops: the server gone after 1.2 s, the pipe's end
    // 2.6–9 s).
    const exited = once(server.cli.child, 'exit')
    const stopAt = Date.now()
    server.cli.child.kill('SIGTERM')
    const [code] = await exited
    expect(code).toBe(0)
    expect(Date.now() - stopAt).toBeLessThan(6000)
    await server.cli.output()
  }, 30_000)
})

// Resolves once a compression process of `pid` has read `size` bytes (its
// rchar in /proc/PID/io): the file, whose compression is then under way.
async function compressing (pid, size) {
  for (;;) {
    for (const child of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
      try {
        const ppid = Number(fs.readFileSync(`/proc/${child}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1])
        if (ppid !== pid || !fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('compress/process.js')) continue
        if (Number(/rchar: (\d+)/.exec(fs.readFileSync(`/proc/${child}/io`, 'utf8'))[1]) >= size) return
      } catch {} // gone meanwhile
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('zcopy serve: access log', () => {
  test('--log json: one object per request', async () => {
    const server = await startServe(root, ['--log', 'json'], { })
    // Each line is awaited before the next request: fetch may use a connection
    // per request, and a line is written when its response is over.
    await (await fetch(new URL('hello.txt', server.url))).text()
    await waitForStdout(server.cli, /"path":"\/hello\.txt"/)
    await (await fetch(new URL('nope', server.url))).text()
    await waitForStdout(server.cli, /"path":"\/nope"/)
    const { code, stdout } = await server.stop()
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line))
    expect(lines[0]).toMatchObject({ msg: expect.stringMatching(/^zcopy serving /), url: server.url })
    const requests = lines.filter((line) => line.method)
    expect(requests).toHaveLength(2)
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/hello.txt', status: 200, bytes: 6, aborted: false, ended: 'complete' })
    expect(typeof requests[0].ms).toBe('number')
    expect(typeof requests[0].zeroCopy).toBe('boolean')
    expect(requests[1]).toMatchObject({ path: '/nope', status: 404 })
    expect(lines.at(-1)).toMatchObject({ msg: 'stopping' })
  })

  test('a client that gives up mid-download: its method, the bytes sent until then, aborted', async () => {
    const server = await startServe(root, ['--log', 'json'])
    const req = http.get(new URL('big.bin', server.url), { agent: false })
    const [res] = await once(req, 'response')
    await once(res, 'data') // some of it arrived
    req.destroy()
    await waitForStdout(server.cli, /"path":"\/big\.bin"/)
    const { stdout } = await server.stop()
    const line = stdout.trim().split('\n').map((text) => JSON.parse(text)).find((entry) => entry.path === '/big.bin')
    expect(line).toMatchObject({ method: 'GET', status: 200, aborted: true, ended: 'aborted' })
    expect(line.bytes).toBeGreaterThan(0)
    expect(line.bytes).toBeLessThan(big.length)
  })

  test('a download cut by the shutdown is logged as such, with the bytes sent until then', async () => {
    const server = await startServe(root, ['--log', 'json', '--shutdown-timeout', '0.3'])
    const download = await slowGet(new URL('big.bin', server.url))
    server.cli.child.kill('SIGTERM')
    const { code, stdout } = await server.cli.output()
    expect(code).toBe(0)
    download.resume()
    await expect(download.done).rejects.toThrow()
    const line = stdout.trim().split('\n').map((text) => JSON.parse(text)).find((entry) => entry.path === '/big.bin')
    expect(line).toMatchObject({ method: 'GET', status: 200, aborted: true, ended: 'shutdown' })
    expect(line.bytes).toBeLessThan(big.length)
  })

  test('text: plain when not a terminal, coloured with FORCE_COLOR; --quiet: none', async () => {
    const plain = await startServe(root, [], { env: { FORCE_COLOR: '', NO_COLOR: '' } })
    const coloured = await startServe(root, [], { env: { FORCE_COLOR: '1', NO_COLOR: '' } })
    const quiet = await startServe(root, ['-q'])
    for (const server of [plain, coloured, quiet]) await (await fetch(new URL('hello.txt', server.url))).text()
    await waitForStdout(plain.cli, /^GET \/hello\.txt/m)
    await waitForStdout(coloured.cli, /^GET \/hello\.txt/m)
    const [p, c, q] = await Promise.all([plain.stop(), coloured.stop(), quiet.stop()])
    expect(p.stdout).toMatch(/^GET \/hello\.txt 200 6 B \d+\.\d ms (zero-copy|stream)$/m)
    expect(p.stdout).not.toContain('\x1b[')
    expect(c.stdout).toContain('GET /hello.txt \x1b[32m200\x1b[0m 6 B \x1b[2m')
    expect(q.stdout).not.toMatch(/^GET /m)
    expect(q.stdout).toMatch(/^zcopy serving /)
  })
})
