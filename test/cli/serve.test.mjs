import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { runCli, startCli, waitForStdout } from './cli.mjs'

const sha256 = (buffer) => crypto.createHash('sha256').update(buffer).digest('hex')

let root
const content = crypto.randomBytes(1024 * 1024 + 17)

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-serve-test-'))
  fs.writeFileSync(path.join(root, 'data.bin'), content)
  fs.writeFileSync(path.join(root, 'hello.txt'), 'hello\n')
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

async function startServe (args = []) {
  const cli = startCli(['serve', root, '--port', '0', ...args])
  const [, url] = await waitForStdout(cli, /at (http:\/\/127\.0\.0\.1:\d+\/)/)
  return { cli, url }
}

describe('zcopy serve', () => {
  test('prints the URL, serves files byte-exact, logs each request, stops on SIGTERM', async () => {
    const { cli, url } = await startServe()
    expect(cli.stdout()).toContain(`zcopy serving ${root} at ${url}`)

    // A line is written when its response is over; fetch may send each request
    // on a connection of its own (Node 20's does), so two responses can end in
    // either order: each line is awaited before the next request.
    const how = /\(zero-copy on[,)]/.test(cli.stdout()) ? 'zero-copy' : 'stream'
    const response = await fetch(new URL('data.bin', url))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-length')).toBe(String(content.length))
    expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(sha256(content))
    await waitForStdout(cli, /^GET \/data\.bin 200 .*$/m)

    const ranged = await fetch(new URL('data.bin', url), { headers: { range: 'bytes=100-199' } })
    expect(ranged.status).toBe(206)
    expect(Buffer.from(await ranged.arrayBuffer()).equals(content.subarray(100, 200))).toBe(true)
    await waitForStdout(cli, /^GET \/data\.bin 206 .*$/m)

    const missing = await fetch(new URL('nope.txt', url))
    expect(missing.status).toBe(404)
    await missing.arrayBuffer()
    await waitForStdout(cli, /^GET \/nope\.txt .*$/m)

    const head = await fetch(new URL('hello.txt', url), { method: 'HEAD' })
    expect(head.status).toBe(200)
    await waitForStdout(cli, /^HEAD \/hello\.txt .*$/m)

    cli.child.kill('SIGTERM')
    const { code, stdout, stderr } = await cli.output()
    expect(code).toBe(0)
    expect(stderr).toBe('')
    await expect(fetch(url)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } }) // nothing left listening

    const log = stdout.split('\n').filter((line) => /^[A-Z]+ \//.test(line))
    expect(log).toHaveLength(4)
    // The native lane lends a request it has no answer for to Node's server,
    // whose body then goes by the lane's sendfile: zero-copy as without it.
    expect(log[0]).toMatch(new RegExp(`^GET /data\\.bin 200 ${content.length} B \\d+\\.\\d ms ${how}$`))
    expect(log[1]).toMatch(new RegExp(`^GET /data\\.bin 206 100 B \\d+\\.\\d ms ${how}$`))
    expect(log[2]).toMatch(/^GET \/nope\.txt 404 \d+ B \d+\.\d ms stream$/)
    expect(log[3]).toMatch(/^HEAD \/hello\.txt 200 0 B \d+\.\d ms no-body$/)
    expect(stdout).toMatch(/stopping/)
  })

  test('a port already in use: one line on stderr, exit code 1', async () => {
    const blocker = net.createServer()
    blocker.listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    try {
      const { port } = blocker.address()
      const { code, stdout, stderr } = await runCli(['serve', root, '--port', String(port)])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toBe(`zcopy: port ${port} is already in use on 127.0.0.1; choose another port, or -p 0 for any free one\n`)
    } finally {
      blocker.close()
    }
  })
})
