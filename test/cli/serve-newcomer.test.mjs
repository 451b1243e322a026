// What a new user of zcopy serve meets first: --dotfiles deny answers 403 as
// --help says (not the 404 of a miss), --dotfiles alone means allow, a folder
// without index.html says how to list it, and Ctrl-C says what it waits for.
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import { afterAll, expect, test } from 'vitest'
import { waitForStdout } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const root = makeRoot({ '.env': 'SECRET=1\n', 'sub/a.txt': 'a\n', 'index.html': '<p>home</p>\n' })
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

async function get (url) {
  const res = await fetch(url)
  return { status: res.status, body: await res.text() }
}

test('--dotfiles deny: 403 Forbidden; ignore (default): 404; --dotfiles alone: allow', async () => {
  for (const [args, status, body] of [
    [['--dotfiles', 'deny'], 403, 'Forbidden\n'],
    [[], 404, 'Not Found\n'],
    [['--dotfiles'], 200, 'SECRET=1\n'],
    [['--dotfiles', 'allow'], 200, 'SECRET=1\n']
  ]) {
    const serve = await startServe(root, ['--quiet', ...args])
    try {
      expect(await get(serve.url + '.env'), args.join(' ')).toEqual({ status, body })
    } finally {
      await serve.stop()
    }
  }
})

test('a folder without index.html: 404 with a hint at --listing; with --listing, the listing', async () => {
  const plain = await startServe(root, ['--quiet'])
  try {
    expect(await get(plain.url + 'sub/')).toEqual({ status: 404, body: 'Not Found\nNo index.html here: start zcopy serve with --listing to list folders.\n' })
    expect(await get(plain.url + 'missing.txt')).toEqual({ status: 404, body: 'Not Found\n' })
  } finally {
    await plain.stop()
  }
  const listing = await startServe(root, ['--quiet', '--listing'])
  try {
    const { status, body } = await get(listing.url + 'sub/')
    expect(status).toBe(200)
    expect(body).toContain('a.txt')
  } finally {
    await listing.stop()
  }
})

test('Ctrl-C during a download says what it waits for, and up to when; a second one cuts it', async () => {
  const big = makeRoot({ 'big.bin': Buffer.alloc(64 * 1024 * 1024, 1) })
  const serve = await startServe(big, ['--quiet'])
  const socket = net.connect(Number(new URL(serve.url).port), '127.0.0.1')
  try {
    await once(socket, 'connect')
    socket.write('GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n')
    socket.pause() // reads nothing: the response stays in flight
    await once(socket, 'readable')
    serve.cli.child.kill('SIGINT')
    await waitForStdout(serve.cli, /zcopy: stopping; waiting up to 10 s for 1 response in flight \(Ctrl-C again to cut them\)/)
    serve.cli.child.kill('SIGINT')
    const { signal } = await serve.cli.output()
    expect(signal).toBe('SIGINT')
  } finally {
    socket.destroy()
    fs.rmSync(big, { recursive: true, force: true })
  }
})

// Node's path (the native lane's lines for the same answers: serve-native-lane-log.test.mjs).
test('the access log says how each body went: a small file asked for again is logged `memory`', async () => {
  const site = makeRoot({ 'small.txt': 'small\n' })
  const serve = await startServe(site, ['--no-native-lane'])
  try {
    // The second request has the file read into memory, off its path: on a loaded
    // machine a few more may come before the read is done.
    const logged = () => serve.cli.stdout().split('\n').filter((line) => line.startsWith('GET /small.txt'))
    for (let i = 0; i < 50 && !logged().some((line) => line.endsWith(' memory')); i++) {
      await (await fetch(serve.url + 'small.txt')).text()
      await waitForStdout(serve.cli, new RegExp(`(^GET /small\\.txt .*\\n){${i + 1}}`, 'm'))
    }
    const lines = logged()
    expect(lines[0]).toMatch(/^GET \/small\.txt 200 6 B \d+\.\d ms (zero-copy|stream)$/)
    expect(lines.at(-1)).toMatch(/^GET \/small\.txt 200 6 B \d+\.\d ms memory$/)
  } finally {
    await serve.stop()
    fs.rmSync(site, { recursive: true, force: true })
  }
})
