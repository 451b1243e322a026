import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { once } from 'node:events'
import { runCli, waitForStdout } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const root = makeRoot({ 'hello.txt': 'hello\n' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const alive = pid => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('zcopy serve --workers', () => {
  test('--workers 2: both serve; a killed worker is replaced; SIGTERM drains all, exit 0', async () => {
    const server = await startServe(root, ['--workers', '2'])
    expect(server.cli.stdout()).toMatch(/, 2 workers\)/)
    const [, list] = await waitForStdout(server.cli, /^ {2}workers: (\d+ \d+)$/m)
    const pids = list.split(' ').map(Number)
    for (let i = 0; i < 4; i++) expect(await (await fetch(new URL('hello.txt', server.url))).text()).toBe('hello\n')
    // A worker logs a response once it is sent, just after the client has it:
    // killed before that, its line would be lost with it.
    await waitForStdout(server.cli, /(^GET \/hello\.txt 200.*\n[^]*){4}/m)

    process.kill(pids[0], 'SIGKILL')
    const [, replacement] = await waitForStdout(server.cli, new RegExp(`^zcopy: worker ${pids[0]} killed by SIGKILL; started worker (\\d+)$`, 'm'))
    await waitForStdout(server.cli, new RegExp(`^zcopy: worker ${replacement} listening$`, 'm'))
    for (let i = 0; i < 4; i++) expect(await (await fetch(new URL('hello.txt', server.url))).text()).toBe('hello\n')

    const { code, stdout, stderr } = await server.stop()
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(stdout).toMatch(/stopping/)
    expect(alive(pids[1])).toBe(false)
    expect(alive(Number(replacement))).toBe(false)
    expect(stdout.split('\n').filter(line => line.startsWith('GET /hello.txt 200'))).toHaveLength(8)
  })

  test('NODE_ENV=production: one worker per core by default', async () => {
    const server = await startServe(root, [], { env: { NODE_ENV: 'production' } })
    const cores = os.availableParallelism()
    if (cores > 1) expect(server.cli.stdout()).toContain(`, ${cores} workers)`)
    else expect(server.cli.stdout()).not.toContain('workers')
    expect((await server.stop()).code).toBe(0)
  })

  test('workers that cannot listen: one line on stderr, exit code 1', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    try {
      const { port } = blocker.address()
      const { code, stdout, stderr } = await runCli(['serve', root, '--workers', '2', '--port', String(port)])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toBe(`zcopy: port ${port} is already in use on 127.0.0.1\n`)
    } finally {
      blocker.close()
    }
  })
})
