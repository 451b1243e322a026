// No compression starts while the server's event loop is busy
// (lib/http/compress/loop-busy.js: more than half of the last quarter second
// spent running callbacks); the files wait, sent as they are, and are made once
// it is not: a server answering as fast as it can loses nothing to a thousand
// new files, nor to the start of the compression process. Here the loop is
// kept busy by work of the test's own (40 ms at a time, 10 ms apart: four
// fifths of the time, and room on its CPU for the others) while one new file,
// then eleven more, are asked for; a build without the hold makes each within
// milliseconds (in another process), and one that holds only bursts (four or
// more waiting) makes the first.
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

test('while the event loop is busy, new files wait to be compressed, even one alone; made once it is not', async () => {
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
  try {
    spin()
    await sleep(600) // the loop busy for more than a whole window
    expect((await ask(0)).status).toBe(200)
    await sleep(1500)
    expect(serve.stats().compressed.made).toBe(0)
    const answers = await Promise.all(Array.from({ length: FILES - 1 }, (_, i) => ask(i + 1)))
    for (const answer of answers) expect(answer.status).toBe(200)
    await sleep(1500)
    expect(serve.stats().compressed.made).toBe(0)
    expect(serve.stats().compressed.pending).toBe(FILES)
    busy = false
    await serve.compressed()
    expect(serve.stats().compressed.made).toBe(FILES)
    const again = await ask(0)
    expect(again.headers['content-encoding']).toBe('br')
  } finally {
    busy = false
    await app.close()
    await serve.close()
    await rm(`${root}-cache`, { recursive: true, force: true })
  }
}, 30_000)
