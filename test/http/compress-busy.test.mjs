// A burst of new files (four or more compressions waiting) is held back while
// the server's event loop is busy (lib/http/compress/loop-busy.js: more than
// half of the last quarter second spent running callbacks), and made once it
// is not: a server answering as fast as it can loses nothing to a thousand new
// files. Past 10 s of waiting, while the loop stays busy, the burst is made a
// twentieth of the time. Here the loop is kept busy by work of the test's own
// (40 ms at a time, 10 ms apart: four fifths of the time, and room on its CPU
// for the others) while twelve new files are asked for; a build without the
// hold makes them all within that time (each takes milliseconds, in another
// process), and one without the share all twelve once the 10 s are past.
// Meanwhile the files are asked for without compression every second, so the
// open-file cache keeps them (an entry unused for 10-20 s is closed, and its
// waiting compression dropped with it: a loaded machine reached that).
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { listen, request } from '../support/http.mjs'

const require = createRequire(import.meta.url)
const { serveStatic } = require('../../lib/index.js')

const FILES = 12
let root
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zcopy-compress-busy-'))
  for (let i = 0; i < FILES; i++) {
    await writeFile(join(root, `f${i}.js`), Array.from({ length: 1500 }, (_, n) => `export const v${n} = ${(n * 2654435761 + i) >>> 0};\n`).join(''))
  }
})
afterAll(() => rm(root, { recursive: true, force: true }))

test('while the event loop is busy, a burst of new files waits to be compressed, then is made a twentieth of the time; all once it is not', async () => {
  const serve = serveStatic(root, { compress: { cacheDir: `${root}-cache` } })
  const app = await listen((req, res) => serve(req, res, () => { res.statusCode = 404; res.end() }))
  let busy = true
  const spin = () => {
    if (!busy) return
    const until = performance.now() + 40
    while (performance.now() < until);
    setTimeout(spin, 10)
  }
  const ask = (i) => request(app.port, `/f${i}.js`, { headers: { 'accept-encoding': 'br' } })
  const keepOpen = setInterval(() => {
    for (let i = 0; i < FILES; i++) request(app.port, `/f${i}.js`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } }).catch(() => {})
  }, 1000)
  try {
    spin()
    await sleep(600) // the loop busy for more than a whole window
    const firstAsked = performance.now()
    const answers = await Promise.all(Array.from({ length: FILES }, (_, i) => ask(i)))
    for (const answer of answers) expect(answer.status).toBe(200)
    await sleep(3000)
    // At most the first job (the queue was short then) and the one after it.
    expect(serve.stats().compressed.made).toBeLessThanOrEqual(2)
    expect(serve.stats().compressed.pending).toBeGreaterThanOrEqual(FILES - 2)
    // Past 10 s of waiting, with the loop still busy, the burst is made a
    // twentieth of the time: one job, then a rest nineteen times its length.
    // A store without that rest makes all twelve within a second or two.
    await sleep(12_500 - (performance.now() - firstAsked))
    expect(serve.stats().compressed.made).toBeLessThanOrEqual(FILES / 2)
    busy = false
    await serve.compressed()
    expect(serve.stats().compressed.discarded).toBe(0)
    expect(serve.stats().compressed.made).toBe(FILES)
    const again = await ask(0)
    expect(again.headers['content-encoding']).toBe('br')
  } finally {
    busy = false
    clearInterval(keepOpen)
    await app.close()
    await serve.close()
    await rm(`${root}-cache`, { recursive: true, force: true })
  }
}, 60_000)
