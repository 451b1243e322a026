import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { expectOneLineUsageError, runCli, startCli, waitForStdout } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const root = makeRoot({ 'hello.txt': 'hello\n' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

async function freePort () {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// Listens on `port` (127.0.0.1) unless something already does; → close().
async function occupy (port) {
  const server = net.createServer()
  server.on('error', () => {})
  server.listen(port, '127.0.0.1')
  await Promise.race([once(server, 'listening'), once(server, 'error')])
  return () => server.close()
}

describe('zcopy serve: where it listens', () => {
  test('-p and PORT choose the port; --port wins over PORT; the URL is printed', async () => {
    const [a, b] = [await freePort(), await freePort()]
    const fromEnv = await startServe(root, [], { env: { PORT: String(a) }, port: [] })
    expect(fromEnv.url).toBe(`http://127.0.0.1:${a}/`)
    expect(await (await fetch(new URL('hello.txt', fromEnv.url))).text()).toBe('hello\n')
    expect((await fromEnv.stop()).code).toBe(0)

    const short = await startServe(root, ['-p', String(b)], { env: { PORT: String(a) }, port: [] })
    expect(short.url).toBe(`http://127.0.0.1:${b}/`)
    expect((await short.stop()).code).toBe(0)
  })

  test('-H 0.0.0.0: localhost URL, then the LAN addresses', async () => {
    const server = await startServe(root, ['-H', '0.0.0.0'])
    expect(server.url).toMatch(/^http:\/\/localhost:\d+\/$/)
    const port = new URL(server.url).port
    expect(await (await fetch(`http://127.0.0.1:${port}/hello.txt`)).text()).toBe('hello\n')
    const { code, stdout } = await server.stop()
    expect(code).toBe(0)
    for (const line of stdout.split('\n').filter((line) => line.includes('on your network'))) {
      expect(line).toMatch(new RegExp(`^  on your network: http://[\\d.]+:${port}/$`))
    }
  })

  // Issue 65, item 10: the default port or $PORT taken is no dead end; the
  // line names the port taken instead.
  test('no --port and 8080 taken: says which free port it took instead', async () => {
    const release = await occupy(8080)
    try {
      const cli = startCli(['serve', root], { env: { PORT: '', NODE_ENV: 'development' } })
      const [, url, port] = await waitForStdout(cli, /at (http:\/\/127\.0\.0\.1:(\d+)\/)/)
      expect(cli.stdout()).toMatch(new RegExp(`^zcopy: port 8080 is taken; using ${port} instead$`, 'm'))
      expect(url).not.toBe('http://127.0.0.1:8080/')
      expect(await (await fetch(new URL('hello.txt', url))).text()).toBe('hello\n')
      cli.child.kill('SIGINT')
      expect((await cli.output()).code).toBe(0)
    } finally {
      release()
    }
  })

  test('$PORT taken (not in production): says which free port it took instead', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    const taken = blocker.address().port
    try {
      const cli = startCli(['serve', root], { env: { PORT: String(taken), NODE_ENV: 'development' } })
      const [, url, port] = await waitForStdout(cli, /at (http:\/\/127\.0\.0\.1:(\d+)\/)/)
      expect(cli.stdout()).toMatch(new RegExp(`^zcopy: port ${taken} is taken; using ${port} instead$`, 'm'))
      expect(await (await fetch(new URL('hello.txt', url))).text()).toBe('hello\n')
      cli.child.kill('SIGINT')
      expect((await cli.output()).code).toBe(0)
    } finally {
      blocker.close()
    }
  })

  test('a port in use that was asked for (--port; PORT in production): one line suggesting -p 0, exit code 1', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    const { port } = blocker.address()
    try {
      for (const [args, env] of [[['--port', String(port)], {}], [[], { PORT: String(port), NODE_ENV: 'production' }]]) {
        const { code, stdout, stderr } = await runCli(['serve', root, ...args, '--workers', '1'], { env })
        expect(code).toBe(1)
        expect(stdout).toBe('')
        expect(stderr).toBe(`zcopy: port ${port} is already in use on 127.0.0.1; choose another port, or -p 0 for any free one\n`)
      }
    } finally {
      blocker.close()
    }
  })

  test('--open runs the opener with the URL', async () => {
    const marker = `${root}/opened.txt`
    const opener = `${root}/opener.sh`
    fs.writeFileSync(opener, `#!/bin/sh\necho "$1" > ${marker}\n`, { mode: 0o755 })
    const server = await startServe(root, ['--open'], { env: { ZCOPY_OPENER: opener } })
    const deadline = Date.now() + 5000
    while (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8') === '') {
      if (Date.now() > deadline) throw new Error('the opener never ran')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(fs.readFileSync(marker, 'utf8').trim()).toBe(server.url)
    expect((await server.stop()).code).toBe(0)
  })

  // Issue 65, item 12: an opener that fails (xdg-open exits 3 with no browser)
  // or is missing is said, with the URL to open by hand; serving goes on.
  test.each([
    ['exits non-zero', (dir) => {
      const opener = `${dir}/failing-opener.sh`
      fs.writeFileSync(opener, '#!/bin/sh\nexit 3\n', { mode: 0o755 })
      return opener
    }, /exit code 3/],
    ['is missing', (dir) => `${dir}/no-such-opener`, /not found/]
  ])('--open with an opener that %s: says so and prints the URL', async (_, makeOpener, why) => {
    const opener = makeOpener(root)
    const server = await startServe(root, ['--open'], { env: { ZCOPY_OPENER: opener } })
    const [line] = await waitForStdout(server.cli, /^zcopy: could not open a browser .*$/m, { within: 5000 })
    expect(line).toMatch(why)
    expect(line).toContain(`(${opener}: `)
    expect(line.endsWith(`; open ${server.url} yourself`)).toBe(true)
    expect(await (await fetch(new URL('hello.txt', server.url))).text()).toBe('hello\n')
    expect((await server.stop()).code).toBe(0)
  })
})

describe('zcopy serve: bad input is one line, exit code 2', () => {
  test.each([
    [['--port', '65536'], /--port must be an integer from 0 to 65535/],
    [['-p', 'x'], /--port must be an integer/],
    [['--max-age', 'soon'], /--max-age must be a number of seconds or a duration/],
    [['--cache', '-5'], /--max-age must be a number of seconds/],
    [['--dotfiles', 'show'], /unknown --dotfiles 'show'/],
    [['--extensions', 'ht ml'], /--extensions must be a comma-separated list/],
    [['--workers', '0'], /--workers must be auto or an integer from 1 to 1024, got '0' \(see 'zcopy serve --help'\)/],
    [['--workers', 'many'], /--workers must be auto or an integer from 1 to 1024, got 'many'/],
    [['--log', 'xml'], /unknown --log 'xml'/],
    [['--shutdown-timeout', 'x'], /--shutdown-timeout must be/],
    [['--ssl-cert', '/no/such/cert.pem', '--ssl-key', '/no/such/key.pem'], /cannot read --ssl-cert \/no\/such\/cert\.pem: no such file/],
    [['--ssl-cert', '/no/such/cert.pem'], /--ssl-cert and --ssl-key go together/],
    [['--http2'], /--http2 needs --ssl-cert and --ssl-key/],
    [['-H', '203.0.113.9'], /cannot listen on 203\.0\.113\.9: not an address of this machine/]
  ])('zcopy serve %j', async (args, pattern) => {
    expectOneLineUsageError(await runCli(['serve', root, '--port', '0', ...args]), pattern)
  })

  test('PORT that is no port', async () => {
    expectOneLineUsageError(await runCli(['serve', root], { env: { PORT: 'http' } }), /PORT must be an integer from 0 to 65535, got 'http'/)
  })

  test('--help: every flag, numbers shown as numbers, an example for each', async () => {
    const { code, stdout } = await runCli(['serve', '--help'])
    expect(code).toBe(0)
    const flags = ['--port', '--host', '--allowed-hosts', '--single', '--cors', '--max-age', '--immutable', '--etag', '--dotfiles', '--precompressed',
      '--extensions', '--listing', '--ssl-cert', '--ssl-key', '--ssl-pass', '--http2', '--workers', '--quiet', '--log', '--shutdown-timeout', '--open']
    const examples = stdout.slice(stdout.indexOf('Examples:'))
    for (const flag of flags) {
      expect(stdout).toContain(flag)
      if (flag !== '--ssl-key') expect(examples).toContain(flag.replace('--etag', '--no-etag'))
    }
    expect(stdout).not.toMatch(/\[default: "\d+"\]/) // 10, not "10"
    expect(stdout).toMatch(/--shutdown-timeout .*\[default: 10\]/s)
  })
})
