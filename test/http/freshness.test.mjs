// The open-file cache answers a known path without a stat while inotify vouches
// for it. Whatever happens to the file on disk (rewritten, replaced, truncated,
// deleted, shadowed by a new name, its directory or the root swapped), the next
// request once the change's event is read serves what is on disk now; under load,
// with files replaced while clients download them, every body is one whole
// version of the file.

import http from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'

// inotify's events are read on the event loop's next turns.
const SEEN = 30

let base, root, app

function serve (options = {}) {
  const middleware = zcopy.serveStatic(root, { extensions: ['html'], ...options })
  return listen((req, res) => middleware(req, res, () => { res.statusCode = 404; res.end('not found') }))
}

beforeEach(async () => {
  base = fs.realpathSync(await mkdtemp(join(tmpdir(), 'zcopy-fresh-')))
  root = join(base, 'public')
  fs.mkdirSync(join(root, 'assets/js'), { recursive: true })
  fs.writeFileSync(join(root, 'a.txt'), 'version one\n')
  fs.writeFileSync(join(root, 'page.html'), '<p>page.html</p>\n')
  fs.writeFileSync(join(root, 'assets/js/app.js'), '// app one\n')
  fs.mkdirSync(join(root, 'docs'))
  fs.writeFileSync(join(root, 'docs/index.html'), '<p>docs one</p>\n')
})

afterEach(async () => {
  if (app) await app.close()
  app = null
  await rm(base, { recursive: true, force: true })
})

async function body (path) {
  const res = await request(app.port, path)
  return res.status === 200 ? res.body.toString() : res.status
}

// Asks three times (the second answer comes from the remembered entry, the third
// from memory for a small file), changes the disk, and asks again once the change
// can have been seen.
async function afterChange (path, change) {
  const first = await body(path)
  expect(await body(path)).toBe(first)
  await sleep(10)
  expect(await body(path)).toBe(first)
  change()
  await sleep(SEEN)
  return body(path)
}

describe('a remembered path follows the disk', () => {
  beforeEach(async () => { app = await serve() })

  test('rewritten in place, same size', async () => {
    expect(await afterChange('/a.txt', () => fs.writeFileSync(join(root, 'a.txt'), 'version two\n'))).toBe('version two\n')
  })

  test('rewritten in place, same size and mtime', async () => {
    const file = join(root, 'a.txt')
    const { atime, mtime } = fs.statSync(file)
    expect(await afterChange('/a.txt', () => {
      fs.writeFileSync(file, 'version TWO\n')
      fs.utimesSync(file, atime, mtime)
    })).toBe('version TWO\n')
  })

  test('replaced by a rename over it', async () => {
    expect(await afterChange('/a.txt', () => {
      fs.writeFileSync(join(root, '.a.tmp'), 'replaced\n')
      fs.renameSync(join(root, '.a.tmp'), join(root, 'a.txt'))
    })).toBe('replaced\n')
  })

  test('rewritten: the headers are the new version\'s (ETag, Last-Modified, Content-Length)', async () => {
    const file = join(root, 'a.txt')
    const before = []
    for (let i = 0; i < 3; i++) before.push((await request(app.port, '/a.txt')).headers) // the last from memory
    expect(new Set(before.map((headers) => headers.etag)).size).toBe(1)
    fs.writeFileSync(file, 'a longer version two\n')
    const mtime = new Date(Date.parse(before[0]['last-modified']) + 60_000)
    fs.utimesSync(file, mtime, mtime)
    await sleep(SEEN)
    const after = await request(app.port, '/a.txt')
    expect(after.body.toString()).toBe('a longer version two\n')
    expect(after.headers['content-length']).toBe('21')
    expect(after.headers.etag).not.toBe(before[0].etag)
    expect(after.headers['last-modified']).toBe(mtime.toUTCString())
  })

  test('truncated', async () => {
    expect(await afterChange('/a.txt', () => fs.truncateSync(join(root, 'a.txt'), 4))).toBe('vers')
  })

  test('deleted', async () => {
    expect(await afterChange('/a.txt', () => fs.unlinkSync(join(root, 'a.txt')))).toBe(404)
  })

  test('made unreadable by a new name: an extensionless path gets the new file', async () => {
    expect(await afterChange('/page', () => fs.writeFileSync(join(root, 'page'), 'plain page\n'))).toBe('plain page\n')
  })

  test('a deep file whose directory is renamed away', async () => {
    expect(await afterChange('/assets/js/app.js', () => fs.renameSync(join(root, 'assets'), join(root, 'old-assets')))).toBe(404)
  })

  test('a deep file whose directory is replaced by another', async () => {
    expect(await afterChange('/assets/js/app.js', () => {
      fs.mkdirSync(join(root, 'next/js'), { recursive: true })
      fs.writeFileSync(join(root, 'next/js/app.js'), '// app two\n')
      fs.renameSync(join(root, 'assets'), join(root, 'old-assets'))
      fs.renameSync(join(root, 'next'), join(root, 'assets'))
    })).toBe('// app two\n')
  })

  test('a directory index rewritten', async () => {
    expect(await afterChange('/docs/', () => fs.writeFileSync(join(root, 'docs/index.html'), '<p>docs two</p>\n'))).toBe('<p>docs two</p>\n')
  })

  test('a file replaced by a directory', async () => {
    expect(await afterChange('/a.txt', () => {
      fs.unlinkSync(join(root, 'a.txt'))
      fs.mkdirSync(join(root, 'a.txt'))
    })).toBe(301) // a directory without its slash: redirected, as express.static does
  })

  test('the root itself renamed away and replaced', async () => {
    expect(await afterChange('/a.txt', () => {
      fs.renameSync(root, join(base, 'public-old'))
      fs.mkdirSync(root)
      fs.writeFileSync(join(root, 'a.txt'), 'new root\n')
    })).toBe('new root\n')
  })

  // A root that is a directory is watched by itself, not from its parent.
  test('the root itself deleted and made again', async () => {
    expect(await afterChange('/a.txt', () => {
      fs.rmSync(root, { recursive: true })
      fs.mkdirSync(root)
      fs.writeFileSync(join(root, 'a.txt'), 'made again\n')
    })).toBe('made again\n')
  })
})

// A path remembered to name the first of several candidates (index files,
// extensions) must see a candidate that comes before it appear.
describe('a remembered path whose better candidate appears', () => {
  beforeEach(async () => { app = await serve({ index: ['index.htm', 'index.html'], extensions: ['htm', 'html'] }) })

  test('an index file earlier in `index`: the directory path gets it', async () => {
    expect(await afterChange('/docs/', () => fs.writeFileSync(join(root, 'docs/index.htm'), '<p>docs htm</p>\n'))).toBe('<p>docs htm</p>\n')
  })

  test('an extension earlier in `extensions`: the extensionless path gets it', async () => {
    expect(await afterChange('/page', () => fs.writeFileSync(join(root, 'page.htm'), '<p>page.htm</p>\n'))).toBe('<p>page.htm</p>\n')
  })
})

// With `precompressed`, a remembered path also keeps which siblings it has, so
// that a hit stats neither name: a sibling that appears, changes or goes must be
// seen as the file's own change is.
describe('a remembered path with precompressed siblings follows the disk', () => {
  beforeEach(async () => { app = await serve({ precompressed: true }) })

  async function gzipped (path) {
    const res = await request(app.port, path, { headers: { 'accept-encoding': 'gzip' } })
    return { encoding: res.headers['content-encoding'] ?? null, vary: res.headers.vary ?? null, body: res.body.toString() }
  }

  async function afterSiblingChange (change) {
    const first = await gzipped('/a.txt')
    expect(await gzipped('/a.txt')).toEqual(first)
    await sleep(10)
    expect(await gzipped('/a.txt')).toEqual(first)
    change()
    await sleep(SEEN)
    return gzipped('/a.txt')
  }

  test('a sibling that appears is sent', async () => {
    expect(await afterSiblingChange(() => fs.writeFileSync(join(root, 'a.txt.gz'), 'gzip one'))).toEqual(
      { encoding: 'gzip', vary: 'Accept-Encoding', body: 'gzip one' })
  })

  test('a sibling rewritten is sent as it is now', async () => {
    fs.writeFileSync(join(root, 'a.txt.gz'), 'gzip one')
    expect(await afterSiblingChange(() => fs.writeFileSync(join(root, 'a.txt.gz'), 'gzip two'))).toEqual(
      { encoding: 'gzip', vary: 'Accept-Encoding', body: 'gzip two' })
  })

  test('a sibling deleted: the file itself, and no Vary', async () => {
    fs.writeFileSync(join(root, 'a.txt.gz'), 'gzip one')
    expect(await afterSiblingChange(() => fs.unlinkSync(join(root, 'a.txt.gz')))).toEqual(
      { encoding: null, vary: null, body: 'version one\n' })
  })

  test('a sibling replaced by a directory: the file itself', async () => {
    fs.writeFileSync(join(root, 'a.txt.gz'), 'gzip one')
    expect(await afterSiblingChange(() => {
      fs.unlinkSync(join(root, 'a.txt.gz'))
      fs.mkdirSync(join(root, 'a.txt.gz'))
    })).toEqual({ encoding: null, vary: null, body: 'version one\n' })
  })
})

// A deploy's swap: a new symlink renamed over the old one, in one step.
function swapLink (link, target) {
  fs.symlinkSync(target, `${link}.next`)
  fs.renameSync(`${link}.next`, link)
}

test('a root that is a symlink, swapped by a deploy', async () => {
  fs.mkdirSync(join(base, 'releases'))
  fs.renameSync(root, join(base, 'releases/1'))
  fs.mkdirSync(join(base, 'releases/2'))
  fs.writeFileSync(join(base, 'releases/2/a.txt'), 'release two\n')
  fs.symlinkSync('releases/1', join(base, 'current'))
  root = join(base, 'current')
  app = await serve()
  expect(await afterChange('/a.txt', () => {
    swapLink(join(base, 'current'), 'releases/2')
  })).toBe('release two\n')
})

// Capistrano's layout: the root is a directory inside the release the symlink
// names (current/public); the swap renames in the directory that holds `current`.
test('a root below a symlink (current/public), swapped by a deploy', async () => {
  for (const release of ['1', '2']) {
    fs.mkdirSync(join(base, 'releases', release, 'public'), { recursive: true })
    fs.writeFileSync(join(base, 'releases', release, 'public/a.txt'), `release ${release}\n`)
  }
  fs.symlinkSync('releases/1', join(base, 'current'))
  root = join(base, 'current/public')
  app = await serve()
  expect(await afterChange('/a.txt', () => {
    swapLink(join(base, 'current'), 'releases/2')
  })).toBe('release 2\n')
})

// A root that was a directory when its files were remembered, then made a symlink
// (the first deploy of a site that used to be copied in place): from then on its
// parent is watched too, and the next swap is seen.
test('a root made a symlink, then swapped by a deploy', async () => {
  fs.mkdirSync(join(base, 'releases/2'), { recursive: true })
  fs.mkdirSync(join(base, 'releases/3'))
  fs.writeFileSync(join(base, 'releases/2/a.txt'), 'release two\n')
  fs.writeFileSync(join(base, 'releases/3/a.txt'), 'release three\n')
  app = await serve()
  expect(await afterChange('/a.txt', () => {
    fs.renameSync(root, join(base, 'public-old'))
    fs.symlinkSync('releases/2', root)
  })).toBe('release two\n')
  expect(await afterChange('/a.txt', () => {
    swapLink(root, 'releases/3')
  })).toBe('release three\n')
})

// Versions are whole files written aside and renamed into place, as deploys and
// build tools do. Every body must be exactly one version; once the writer stops,
// every path serves the last one.
test('files replaced under load: every body is one whole version, the last one wins', async () => {
  app = await serve()
  const names = ['one.txt', 'two.txt', 'deep/three.txt', 'deep/four.txt']
  fs.mkdirSync(join(root, 'deep'))
  const versions = new Set()
  const latest = new Map()
  let serial = 0
  const write = (name) => {
    const content = Buffer.concat([Buffer.from(`${name} #${++serial}\n`), randomBytes(1 + Math.floor(Math.random() * 64 * 1024))])
    versions.add(createHash('sha256').update(content).digest('hex'))
    fs.writeFileSync(join(root, `${name}.tmp`), content)
    fs.renameSync(join(root, `${name}.tmp`), join(root, name))
    latest.set(name, content)
  }
  for (const name of names) write(name)

  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const get = (name) => request(app.port, `/${name}`, { agent })
    .then(({ status, headers, body }) => ({ status, body, length: Number(headers['content-length']) }))

  let stop = false
  let responses = 0
  const wrong = []
  const client = async () => {
    while (!stop) {
      const name = names[Math.floor(Math.random() * names.length)]
      const res = await get(name)
      responses++
      const hash = createHash('sha256').update(res.body).digest('hex')
      if (res.status !== 200 || res.body.length !== res.length || !versions.has(hash)) wrong.push({ name, status: res.status })
    }
  }
  const clients = Array.from({ length: 8 }, client)
  // Two seconds of replacements, longer on a loaded machine until 200 responses
  // have raced them (at most 15 s).
  const started = Date.now()
  while (Date.now() - started < 2000 || (responses <= 200 && Date.now() - started < 15_000)) {
    write(names[Math.floor(Math.random() * names.length)])
    await sleep(2)
  }
  stop = true
  await Promise.all(clients)
  await sleep(SEEN)
  for (const name of names) {
    const res = await get(name)
    expect(res.body.equals(latest.get(name)), `${name} serves its last version`).toBe(true)
  }
  agent.destroy()
  expect(wrong).toEqual([])
  expect(responses).toBeGreaterThan(200)
}, 30_000)
