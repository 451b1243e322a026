// The miss path's name lookups wait on the thread pool, never on the event loop
// (issue 22): with every stat of the requested names made to take a second
// (strace's fault injection, on those paths only), other work on the server's
// event loop goes on. A stat on a network file system whose server is slow is
// the real case; fs.statSync there would stall every client for as long.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, test } from 'vitest'
import { request } from '../support/http.mjs'

const SERVER = fileURLToPath(new URL('./children/lag-server.mjs', import.meta.url))
const DELAY_US = 1_000_000
const hasStrace = spawnSync('strace', ['-V']).status === 0 &&
  spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '-e', 'inject=statx:delay_enter=1', process.execPath, '-e', '0']).status === 0

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-miss-path-'))
fs.mkdirSync(path.join(root, 'dir'))
fs.writeFileSync(path.join(root, 'dir', 'index.html'), 'index\n')
fs.writeFileSync(path.join(root, 'found.txt'), 'found\n')
fs.writeFileSync(path.join(root, 'page.html'), 'page\n')
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

function get (port, url) {
  return request(port, url).then(({ status, body }) => ({ status, body: body.toString() }))
}

test.skipIf(!hasStrace)('a second-long stat of each requested name leaves the event loop free', async () => {
  // Slowed: names looked up and not there (a 404; an index file and an
  // extension tried before the ones found; precompressed siblings). Names that
  // are opened are not slowed: the fstat of an opened descriptor (the inode in
  // memory) is the same system call, and strace's -P would slow it too.
  const slowed = ['missing.txt', 'dir/index.htm', 'page.htm', 'found.txt.br', 'found.txt.gz'].map((name) => path.join(root, name))
  const options = { index: ['index.htm', 'index.html'], extensions: ['htm', 'html'], precompressed: true }
  const child = spawn('strace', [
    '-f', '-qq', '-o', '/dev/null', '--seccomp-bpf',
    '-e', 'trace=stat,lstat,newfstatat,statx',
    '-e', `inject=stat,lstat,newfstatat,statx:delay_enter=${DELAY_US}`,
    ...slowed.flatMap((file) => ['-P', file]),
    process.execPath, SERVER, root, JSON.stringify(options)
  ], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    const { port } = await new Promise((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)))
    })
    const started = Date.now()
    const answers = await Promise.all(['/missing.txt', '/found.txt', '/dir/', '/page'].map((url) => get(port, url)))
    expect(answers.map(({ status, body }) => [status, body])).toEqual([[404, 'not found'], [200, 'found\n'], [200, 'index\n'], [200, 'page\n']])
    expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_US / 1000 * 0.9) // the stats were slowed
    const { maxMs } = JSON.parse((await get(port, '/__lag')).body)
    // Sync stats would have held the loop for a second each.
    expect(maxMs).toBeLessThan(DELAY_US / 1000 / 2)
  } finally {
    child.kill('SIGKILL')
  }
})
