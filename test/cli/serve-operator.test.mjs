// Careless operators and DNS rebinding: zcopy serve bound to loopback answers
// only Host values naming loopback (unless --allowed-hosts says more), refuses
// a passphrase "file" that is a FIFO at once instead of hanging, and says so
// when it serves the whole file system or a home folder.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http2 from 'node:http2'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { expectOneLineUsageError, runCli, startCli, waitForStdout } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const cert = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const key = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const root = makeRoot({ 'hello.txt': 'hello\n' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

// A raw HTTP/1.1 GET with exactly this Host header → { status, body }.
async function getWithHost (url, host) {
  const { port } = new URL(url)
  const socket = net.connect(Number(port), '127.0.0.1')
  let text = ''
  socket.setEncoding('latin1').on('data', (chunk) => { text += chunk })
  socket.write(`GET /hello.txt HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
  await new Promise((resolve) => socket.on('close', resolve))
  return { status: Number(text.slice(9, 12)), body: text.slice(text.indexOf('\r\n\r\n') + 4) }
}

describe('Host check on a loopback bind (DNS rebinding)', () => {
  let serve
  afterAll(() => serve?.stop())

  test('loopback names are answered, any other Host gets 403 naming the flag', async () => {
    serve = await startServe(root, ['--quiet'])
    const port = new URL(serve.url).port
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, '127.1.2.3', `app.localhost:${port}`, 'localhost.']) {
      const { status, body } = await getWithHost(serve.url, host)
      expect(status, host).toBe(200)
      expect(body).toBe('hello\n')
    }
    for (const host of ['evil.example', `evil.example:${port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '[::2]', '10.0.0.1']) {
      const { status, body } = await getWithHost(serve.url, host)
      expect(status, host).toBe(403)
      expect(body).toContain('--allowed-hosts')
      expect(body).not.toContain('hello')
    }
  })

  test('over HTTP/2, :authority is what is checked', async () => {
    const h2 = await startServe(root, ['--quiet', '--http2', '--ssl-cert', cert, '--ssl-key', key])
    try {
      const session = http2.connect(h2.url, { ca: fs.readFileSync(cert), servername: 'localhost' })
      const status = (authority) => new Promise((resolve, reject) => {
        const stream = session.request({ ':path': '/hello.txt', ':authority': authority })
        stream.on('response', (headers) => { resolve(headers[':status']); stream.resume() })
        stream.on('error', reject)
      })
      expect(await status('localhost')).toBe(200)
      expect(await status('evil.example')).toBe(403)
      session.close()
    } finally {
      await h2.stop()
    }
  })

  test('--allowed-hosts adds names and domains; all answers any Host', async () => {
    const some = await startServe(root, ['--quiet', '--allowed-hosts', 'dev.example.com,.test.example'])
    try {
      expect((await getWithHost(some.url, 'dev.example.com')).status).toBe(200)
      expect((await getWithHost(some.url, 'a.b.test.example:80')).status).toBe(200)
      expect((await getWithHost(some.url, 'test.example')).status).toBe(200)
      expect((await getWithHost(some.url, 'localhost')).status).toBe(200)
      expect((await getWithHost(some.url, 'evil.example')).status).toBe(403)
    } finally {
      await some.stop()
    }
    const all = await startServe(root, ['--quiet', '--allowed-hosts', 'all'])
    try {
      expect((await getWithHost(all.url, 'evil.example')).status).toBe(200)
    } finally {
      await all.stop()
    }
  })

  test('bound to every interface, any Host is answered (a LAN or public name)', async () => {
    const wide = await startServe(root, ['--quiet', '--host', '0.0.0.0'])
    try {
      expect((await getWithHost(wide.url.replace('localhost', '127.0.0.1'), 'files.example')).status).toBe(200)
    } finally {
      await wide.stop()
    }
  })
})

describe('operator mistakes', () => {
  test('--ssl-pass naming a FIFO: one line, exit code 2, at once (no writer is waited for)', async () => {
    const dir = makeRoot({})
    try {
      const fifo = path.join(dir, 'pass.fifo')
      execFileSync('mkfifo', [fifo])
      const started = Date.now()
      const result = await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', key, '--ssl-pass', fifo])
      expectOneLineUsageError(result, /--ssl-pass .*pass\.fifo is not a regular file/)
      expect(Date.now() - started).toBeLessThan(20_000) // a hang is killed by the test's own timeout
      expectOneLineUsageError(await runCli(['serve', root, '--port', '0', '--ssl-cert', dir, '--ssl-key', key]), /--ssl-cert .* is not a regular file/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test.each([
    ['/', false, /^zcopy: warning: serving \/, the whole file system(, as root)?: every readable file below it can be downloaded\n$/],
    ['the home folder', true, /^zcopy: warning: serving .+, your home folder(, as root)?: every readable file below it can be downloaded\n$/]
  ])('serving %s: it starts, with one warning on stderr', async (what, isHome, warning) => {
    const home = makeRoot({})
    try {
      const cli = startCli(['serve', isHome ? home : '/', '--port', '0', '--quiet'], { env: isHome ? { HOME: home } : {} })
      await waitForStdout(cli, /at http:\/\/[^ ]+\//)
      cli.child.kill('SIGTERM')
      expect((await cli.output()).stderr).toMatch(warning)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  test('serving an ordinary folder: no warning', async () => {
    const cli = startCli(['serve', root, '--port', '0', '--quiet'])
    await waitForStdout(cli, /at http:\/\/[^ ]+\//)
    cli.child.kill('SIGTERM')
    expect((await cli.output()).stderr).toBe('')
  })
})
