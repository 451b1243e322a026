import { afterAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { runCli, waitForStdout } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const root = makeRoot({ 'hello.txt': 'hello\n' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// One GET on a connection of its own (no pool that may hold one from before).
function getOnNewConnection (url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, timeout: 3000 }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk) => { body += chunk }).on('end', () => resolve(body))
    }).on('timeout', function () { this.destroy(new Error('no answer in 3 s')) }).on('error', reject)
  })
}

describe('zcopy serve --workers', () => {
  test('--workers 2: both serve; a killed worker is replaced; SIGTERM drains all, exit 0', async () => {
    const server = await startServe(root, ['--workers', '2'])
    expect(server.cli.stdout()).toMatch(/, 2 workers\)/)
    let pids, replacement, exit
    try {
      const [, list] = await waitForStdout(server.cli, /^ {2}workers: (\d+ \d+)$/m)
      pids = list.split(' ').map(Number)
      for (let i = 0; i < 4; i++) expect(await (await fetch(new URL('hello.txt', server.url))).text()).toBe('hello\n')
      // A worker logs a response once it is sent, just after the client has it:
      // killed before that, its line would be lost with it.
      await waitForStdout(server.cli, /(^GET \/hello\.txt 200.*\n[^]*){4}/m)

      process.kill(pids[0], 'SIGKILL')
      const killed = new RegExp(`^zcopy: worker ${pids[0]} killed by SIGKILL; started worker (\\d+)$`, 'm')
      replacement = (await waitForStdout(server.cli, killed))[1]
      await waitForStdout(server.cli, new RegExp(`^zcopy: worker ${replacement} listening$`, 'm'))
      // On new connections: fetch's pool may hand out its kept-alive connection
      // to the killed worker before it has read that connection's end (read
      // ECONNRESET, 1 run in 12 on Node 24.21 under load).
      for (let i = 0; i < 4; i++) expect(await getOnNewConnection(new URL('hello.txt', server.url))).toBe('hello\n')
    } finally {
      exit = await server.stop() // also when an expectation failed: no server left behind
    }
    const { code, stdout, stderr } = exit
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(stdout).toMatch(/stopping/)
    expect(alive(pids[1])).toBe(false)
    expect(alive(Number(replacement))).toBe(false)
    expect(stdout.split('\n').filter((line) => line.startsWith('GET /hello.txt 200'))).toHaveLength(8)
  })

  // The workers accept from the listening socket they share: the primary hands
  // out no connection, so new connections are served while it is stopped.
  // NODE_CLUSTER_SCHED_POLICY=rr (node:cluster's round-robin) undoes that.
  test.skipIf(process.platform === 'win32').each([
    ['', 'served'],
    ['rr', 'not served']
  ])('NODE_CLUSTER_SCHED_POLICY=%j, primary stopped: new connections %s', async (policy, outcome) => {
    const server = await startServe(root, ['--workers', '2', '--quiet'], { env: { NODE_CLUSTER_SCHED_POLICY: policy } })
    const primary = server.cli.child.pid
    let exit
    try {
      process.kill(primary, 'SIGSTOP')
      try {
        const url = new URL('hello.txt', server.url)
        if (outcome === 'served') {
          for (let i = 0; i < 4; i++) expect(await getOnNewConnection(url)).toBe('hello\n')
        } else {
          await expect(getOnNewConnection(url)).rejects.toThrow(/no answer/)
        }
      } finally {
        process.kill(primary, 'SIGCONT')
      }
    } finally {
      exit = await server.stop() // also when an expectation failed: no server left behind
    }
    expect(exit.code).toBe(0)
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
      expect(stderr).toBe(`zcopy: port ${port} is already in use on 127.0.0.1; choose another port, or -p 0 for any free one\n`)
    } finally {
      blocker.close()
    }
  })

  // A primary that reads the first worker's failure late (a hook holds its event
  // loop 500 ms on that message) finds the second worker already exited, its
  // channel's close not seen yet: the stop message to it fails with EPIPE. That
  // crashed the primary (an unhandled 'error' event; 8 of 8 runs before the fix,
  // seen once in CI on Node 24 without the hook).
  test('workers that cannot listen and exit before the primary reads their failure: one line, exit code 1', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    const hook = fileURLToPath(new URL('../fixtures/cli/slow-primary.cjs', import.meta.url))
    try {
      const { port } = blocker.address()
      const { code, stdout, stderr } = await runCli(['serve', root, '--workers', '2', '--port', String(port)], {
        env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${hook}` }
      })
      expect(stderr).toBe(`zcopy: port ${port} is already in use on 127.0.0.1; choose another port, or -p 0 for any free one\n`)
      expect(stdout).toBe('')
      expect(code).toBe(1)
    } finally {
      blocker.close()
    }
  })
})
