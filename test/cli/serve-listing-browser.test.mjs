import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { makeRoot, startServe } from './serve-helpers.mjs'

// The --listing page in a real browser (headless Chromium, issue 65.14): it
// renders with its style allowed by its own Content-Security-Policy, a
// breadcrumb leads to its folder, a hostile file name stays text. Skipped
// where no Chromium is installed (CI machines may have none).

const BROWSER = ['chromium', 'chromium-browser', 'google-chrome'].find((name) => spawnSync(name, ['--version']).status === 0)
if (!BROWSER) console.warn('serve-listing-browser.test.mjs: no Chromium on PATH (apt-get install chromium): the browser tests are skipped')

const HOSTILE_FILE = '<img src=x onerror=alert(1)>.txt'
const HOSTILE_FOLDER = 'q"a&b%25c#d?e'

let root
let server
let profile
beforeAll(async () => {
  if (!BROWSER) return
  root = makeRoot({
    'README.md': 'readme',
    'app.js': 'app',
    'alpha/beta gamma/deep.txt': 'deep',
    [`${HOSTILE_FOLDER}/${HOSTILE_FILE}`]: 'x',
    [`${HOSTILE_FOLDER}/a "quoted" & 100%.txt`]: 'y'
  })
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-chromium-'))
  server = await startServe(root, ['--listing', '--quiet'])
})
afterAll(async () => {
  await server?.stop()
  for (const dir of [root, profile]) if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

// → { dom, stderr }: the DOM Chromium built for `url` (after any script would
// have run), and its log, where the page's console messages (a Content
// Security Policy violation among them) are written.
async function browse (url, extra = ['--dump-dom']) {
  const { stdout, stderr } = await promisify(execFile)(BROWSER, [
    '--headless', '--disable-gpu', '--no-sandbox', '--no-first-run', `--user-data-dir=${profile}`,
    '--enable-logging=stderr', '--v=0', ...extra, url
  ], { timeout: 60000, maxBuffer: 16 << 20 })
  return { dom: stdout, stderr }
}

// The href of the breadcrumb link whose text is `text`, in the DOM's <h1>.
function breadcrumb (dom, text) {
  const h1 = /<h1>[\s\S]*?<\/h1>/.exec(dom)[0]
  const link = [...h1.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].find((match) => match[2] === text)
  return link[1].replaceAll('&amp;', '&')
}

describe.skipIf(!BROWSER)('(needs Chromium) zcopy serve --listing in a browser', () => {
  test('the page renders, its style is not blocked by its own policy', async () => {
    const { dom, stderr } = await browse(server.url)
    expect(dom).toContain('<h1>Index of <a href="/" aria-current="page">/</a></h1>')
    expect(dom).toMatch(/<a href="alpha\/">alpha\/<\/a>[\s\S]*<a href="app.js">app.js<\/a>[\s\S]*<a href="README.md">README.md<\/a>/)
    expect(stderr).not.toContain('Content Security Policy')
    const shot = path.join(profile, 'listing.png')
    await browse(server.url, ['--window-size=800,600', `--screenshot=${shot}`])
    expect(fs.readFileSync(shot).subarray(1, 4).toString()).toBe('PNG')
  }, 120000)

  test('a breadcrumb leads to its folder', async () => {
    const deep = new URL('alpha/beta%20gamma/', server.url)
    const { dom } = await browse(deep.href)
    expect(dom).toContain('<title>Index of /alpha/beta gamma/</title>')
    const parent = new URL(breadcrumb(dom, 'alpha'), deep)
    expect(parent.href).toBe(new URL('alpha/', server.url).href)
    const { dom: listed } = await browse(parent.href)
    expect(listed).toContain('<title>Index of /alpha/</title>')
    expect(listed).toContain('<a href="beta%20gamma/">beta gamma/</a>')
    const top = new URL(breadcrumb(dom, '/'), deep)
    expect((await browse(top.href)).dom).toContain('<a href="README.md">README.md</a>')
  }, 120000)

  test('a hostile file name stays text: no element made of it, no script run', async () => {
    const folder = new URL(`${encodeURIComponent(HOSTILE_FOLDER)}/`, server.url)
    const { dom, stderr } = await browse(folder.href)
    expect(dom).toContain('&lt;img src=x onerror=alert(1)&gt;.txt</a>')
    expect(dom).toContain('a "quoted" &amp; 100%.txt</a>')
    expect(dom).not.toMatch(/<img/i)
    expect(stderr).not.toContain('Content Security Policy') // nothing inline was even tried
    expect(dom).toContain('<title>Index of /q"a&amp;b%25c#d?e/</title>')
    // Its own breadcrumb (with '"', '&', '%', '#' and '?' in it) leads back to it.
    const self = new URL(breadcrumb(dom, 'q"a&amp;b%25c#d?e'), folder)
    expect(self.href).toBe(folder.href)
    expect((await browse(self.href)).dom).toContain('&lt;img src=x onerror=alert(1)&gt;.txt</a>')
  }, 120000)
})
