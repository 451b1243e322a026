import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { makeRoot, startServe } from './serve-helpers.mjs'

// The --listing page of issue 65.14: natural sort with folders first, sort
// links in the column headers (no script), breadcrumbs, hostile names escaped,
// a strict Content-Security-Policy.

const HOSTILE_FILE = '<img src=x onerror=alert(1)>.txt'
const HOSTILE_FOLDER = 'q"a&b%25c#d?e<i>'
const root = makeRoot({
  'README.md': 'r'.repeat(30),
  'app.js': 'a'.repeat(10),
  'file10.txt': 'f'.repeat(20),
  'file9.txt': 'f'.repeat(40),
  'File2.txt': 'f',
  'Zeta/z.txt': 'z',
  'alpha/beta gamma/deep.txt': 'deep',
  [`${HOSTILE_FOLDER}/${HOSTILE_FILE}`]: 'x'
})
// Dates: app.js the newest, README.md the oldest; folders between.
const day = 86400e3
const dates = { 'README.md': 1, 'file10.txt': 2, 'File2.txt': 3, 'file9.txt': 4, 'app.js': 5, Zeta: 2, alpha: 3 }
for (const [name, days] of Object.entries(dates)) {
  const when = new Date(Date.UTC(2026, 0, 1) + days * day)
  fs.utimesSync(path.join(root, name), when, when)
}

const BY_NAME = ['alpha', HOSTILE_FOLDER, 'Zeta', 'app.js', 'File2.txt', 'file9.txt', 'file10.txt', 'README.md']

let server
beforeAll(async () => { server = await startServe(root, ['--listing', '--quiet']) })
afterAll(async () => {
  await server?.stop()
  fs.rmSync(root, { recursive: true, force: true })
})

async function names (query) {
  const response = await fetch(new URL(query, server.url), { headers: { accept: 'application/json' } })
  return (await response.json()).entries.map((entry) => entry.name)
}

async function page (where) {
  const response = await fetch(new URL(where, server.url))
  expect(response.status).toBe(200)
  return { html: await response.text(), csp: response.headers.get('content-security-policy') }
}

function linkedNames (html) {
  return [...html.matchAll(/<tr><td><a href="[^"]*">([^<]*)<\/a>/g)].map((match) => match[1]).filter((name) => name !== '../')
}

describe('zcopy serve --listing: order', () => {
  test('folders first, then names case-insensitive and numbers by value', async () => {
    expect(await names('/')).toEqual(BY_NAME)
    const { html } = await page('/')
    expect(linkedNames(html)).toEqual(['alpha/', 'q&quot;a&amp;b%25c#d?e&lt;i&gt;/', 'Zeta/', 'app.js', 'File2.txt', 'file9.txt', 'file10.txt', 'README.md'])
  })

  test('?sort=size and ?sort=date, &order=desc; folders still first; anything else is by name', async () => {
    const folders = BY_NAME.slice(0, 3)
    expect(await names('/?sort=size')).toEqual([...folders, 'File2.txt', 'app.js', 'file10.txt', 'README.md', 'file9.txt'])
    expect(await names('/?sort=size&order=desc')).toEqual([...folders, 'file9.txt', 'README.md', 'file10.txt', 'app.js', 'File2.txt'])
    const byDate = await names('/?sort=date')
    expect(byDate.slice(0, 3)).toEqual(['Zeta', 'alpha', HOSTILE_FOLDER]) // the last one: today
    expect(byDate.slice(3)).toEqual(['README.md', 'file10.txt', 'File2.txt', 'file9.txt', 'app.js'])
    expect((await names('/?sort=date&order=desc')).slice(3)).toEqual(['app.js', 'file9.txt', 'File2.txt', 'file10.txt', 'README.md'])
    expect(await names('/?sort=nope&order=sideways')).toEqual(BY_NAME)
    const response = await fetch(new URL('/?sort=size&order=desc', server.url), { headers: { accept: 'application/json' } })
    const listed = await response.json()
    expect(listed).toMatchObject({ path: '/', total: 8, truncated: false, sort: 'size', order: 'desc' })
    expect(listed.entries[3]).toEqual({ name: 'file9.txt', type: 'file', size: 40, mtime: '2026-01-05T00:00:00.000Z' })
  })

  test('the column headers are links that sort (the sorted one reverses), no script', async () => {
    const { html: byName } = await page('/')
    expect(byName).toContain('<th scope="col" aria-sort="ascending"><a href="?sort=name&amp;order=desc">Name ↑</a></th>')
    expect(byName).toContain('<th scope="col"><a href="?sort=size">Size</a></th>')
    expect(byName).toContain('<th scope="col"><a href="?sort=date">Modified (UTC)</a></th>')
    const { html: bySize } = await page('/?sort=size&order=desc')
    expect(bySize).toContain('<th scope="col"><a href="?sort=name">Name</a></th>')
    expect(bySize).toContain('<th scope="col" aria-sort="descending"><a href="?sort=size">Size ↓</a></th>')
    expect(linkedNames(bySize).slice(3)).toEqual(['file9.txt', 'README.md', 'file10.txt', 'app.js', 'File2.txt'])
    expect(byName).not.toMatch(/<script|\son\w+=/i)
  })

  test('sizes human with the exact bytes on hover, dates in ISO form', async () => {
    const { html } = await page('/')
    expect(html).toContain('<span title="40 bytes">40 B</span>')
    expect(html).toContain('<time datetime="2026-01-05T00:00:00.000Z">2026-01-05 00:00:00</time>')
    const big = path.join(root, 'alpha', 'big.bin')
    fs.writeFileSync(big, Buffer.alloc(1234567))
    expect(await (await fetch(new URL('/alpha/', server.url))).text()).toContain('<span title="1,234,567 bytes">1.2 MiB</span>')
    fs.rmSync(big)
  })
})

describe('zcopy serve --listing: breadcrumbs', () => {
  test('each part of the path links to its folder', async () => {
    const { html } = await page('/alpha/beta%20gamma/')
    expect(html).toContain('<h1>Index of <a href="/">/</a><a href="/alpha/">alpha</a>/' +
      '<a href="/alpha/beta%20gamma/" aria-current="page">beta gamma</a>/</h1>')
    expect((await page('/')).html).toContain('<h1>Index of <a href="/" aria-current="page">/</a></h1>')
    for (const href of ['/', '/alpha/']) expect((await fetch(new URL(href, server.url))).status).toBe(200)
  })

  test('a hostile folder and file name: escaped in text, percent-encoded in hrefs, in the title too', async () => {
    const encoded = encodeURIComponent(HOSTILE_FOLDER) // q%22a%26b%2525c%23d%3Fe%3Ci%3E
    const shown = 'q&quot;a&amp;b%25c#d?e&lt;i&gt;'
    const { html, csp } = await page(`/${encoded}/`)
    expect(html).toContain(`<title>Index of /${shown}/</title>`)
    expect(html).toContain(`<a href="/${encoded}/" aria-current="page">${shown}</a>/</h1>`)
    expect(html).toContain('<a href="%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.txt">&lt;img src=x onerror=alert(1)&gt;.txt</a>')
    expect(html).not.toMatch(/<img|<i>/i)
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+={0,2}'; base-uri 'none'; form-action 'none'$/)
    // The links lead where they say.
    expect((await fetch(new URL(`/${encoded}/${encodeURIComponent(HOSTILE_FILE)}`, server.url))).status).toBe(200)
  })
})
