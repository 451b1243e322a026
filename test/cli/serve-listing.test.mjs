import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { makeRoot, startServe } from './serve-helpers.mjs'

const root = makeRoot({
  '<script>.txt': 'x',
  'a & b.txt': 'ab',
  'sub/inner.txt': 'inner',
  '.secret': 'no',
  '.git/config': 'no',
  'site/index.html': '<h1>site</h1>'
})
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-outside-'))
fs.writeFileSync(path.join(outside, 'passwd'), 'outside')
fs.symlinkSync(path.join(outside, 'passwd'), path.join(root, 'escape.txt'))
fs.symlinkSync(outside, path.join(root, 'escape-dir'))
fs.symlinkSync(path.join(root, 'sub', 'inner.txt'), path.join(root, 'inside-link.txt'))
execFileSync('mkfifo', [path.join(root, 'pipe')])

let listing
let off
beforeAll(async () => {
  [listing, off] = await Promise.all([startServe(root, ['--listing']), startServe(root, [])])
})
afterAll(async () => {
  await Promise.all([listing, off].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

describe('zcopy serve --listing', () => {
  test('HTML: names escaped, sizes and dates, only what would be served', async () => {
    const response = await fetch(listing.url)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const html = await response.text()
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<th scope="col" aria-sort="ascending"><a href="?sort=name&amp;order=desc">Name ↑</a></th>')
    expect(html).toContain('<a href="%3Cscript%3E.txt">&lt;script&gt;.txt</a>')
    expect(html).not.toContain('<script>')
    expect(html).toContain('<a href="a%20%26%20b.txt">a &amp; b.txt</a>')
    expect(html).toContain('<a href="sub/">sub/</a>')
    expect(html).toContain('<a href="inside-link.txt">')
    expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/)
    expect(html).toContain('<span title="5 bytes">5 B</span>')
    for (const hidden of ['.secret', '.git', 'escape.txt', 'escape-dir', '>pipe<']) expect(html).not.toContain(hidden)
  })

  test('JSON when the client asks for application/json', async () => {
    const response = await fetch(new URL('sub/', listing.url), { headers: { accept: 'application/json' } })
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(response.headers.get('vary')).toBe('Accept')
    const { path: where, entries } = await response.json()
    expect(where).toBe('/sub/')
    expect(entries).toEqual([{ name: 'inner.txt', type: 'file', size: 5, mtime: expect.any(String) }])
    const top = await (await fetch(listing.url, { headers: { accept: 'application/json' } })).json()
    expect(top.entries.map((entry) => entry.name)).toEqual(['site', 'sub', '<script>.txt', 'a & b.txt', 'inside-link.txt'])
  })

  test('an index.html wins; refused folders are not listed; off by default', async () => {
    expect(await (await fetch(new URL('site/', listing.url))).text()).toBe('<h1>site</h1>')
    expect((await fetch(new URL('.git/', listing.url))).status).toBe(404)
    expect((await fetch(new URL('escape-dir/', listing.url))).status).toBe(404)
    expect((await fetch(new URL('sub/', off.url))).status).toBe(404)
  })
})

describe('zcopy serve --listing of a huge folder (issue 22.3)', () => {
  const COUNT = 50000
  let big
  let server
  beforeAll(async () => {
    big = makeRoot({ 'small.txt': 'small' })
    const huge = path.join(big, 'huge')
    fs.mkdirSync(huge)
    for (let i = 0; i < COUNT; i++) fs.closeSync(fs.openSync(path.join(huge, `f${String(i).padStart(5, '0')}.txt`), 'w'))
    fs.mkdirSync(path.join(huge, 'zz-folder'))
    server = await startServe(big, ['--listing', '--quiet'])
  }, 120000)
  afterAll(async () => {
    await server?.stop()
    fs.rmSync(big, { recursive: true, force: true })
  })

  test('other clients are answered while it is built (no blocking call); capped, and said so', async () => {
    // A blocking build (readdirSync + statSync per entry: 1.3-2.9 s here) answers
    // the small file only after the listing, every time; a build off the event
    // loop answers it at once, though on a loaded machine the build (~0.2 s) may
    // now and then end first (seen once in CI): up to three tries, each on a
    // folder whose new times make the listing be built again.
    let listed = null
    let answeredFirst = false
    for (let attempt = 0; attempt < 3 && !answeredFirst; attempt++) {
      if (attempt > 0) fs.utimesSync(path.join(big, 'huge'), new Date(), new Date(Date.now() - attempt * 1000))
      listed = null
      const listing = fetch(new URL('huge/', server.url), { headers: { accept: 'application/json' } })
        .then(async (response) => { listed = await response.json() })
      await new Promise((resolve) => setTimeout(resolve, 10)) // the listing's request first
      expect(await (await fetch(new URL('small.txt', server.url))).text()).toBe('small')
      answeredFirst = listed === null // still being built
      await listing
    }
    expect(answeredFirst).toBe(true)
    expect(listed.total).toBe(COUNT + 1)
    expect(listed.truncated).toBe(true)
    expect(listed.entries).toHaveLength(1000)
    expect(listed.entries[0]).toEqual({ name: 'zz-folder', type: 'directory', size: null, mtime: expect.any(String) })
    expect(listed.entries[1].name).toBe('f00000.txt')
    expect(listed.entries[999].name).toBe('f00998.txt')
    const html = await (await fetch(new URL('huge/', server.url))).text()
    expect(html).toContain(`<caption>${COUNT + 1} entries, the first 1000 shown</caption>`)
    expect(html.match(/<tr><td>/g)).toHaveLength(1001) // '../' and 1000 entries
  }, 60000)

  test('remembered while the folder is unchanged; an added entry is listed', async () => {
    const url = new URL('huge/', server.url)
    const json = async () => (await fetch(url, { headers: { accept: 'application/json' } })).json()
    expect((await json()).total).toBe(COUNT + 1)
    fs.writeFileSync(path.join(big, 'huge', 'a-new.txt'), 'new!')
    const again = await json()
    expect(again.total).toBe(COUNT + 2)
    expect(again.entries[1]).toEqual({ name: 'a-new.txt', type: 'file', size: 4, mtime: expect.any(String) })
  }, 60000)
})
