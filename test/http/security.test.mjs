// Nothing outside the root is ever served or revealed: a table of attack paths,
// each with the status it must get and a check that the secret's bytes, and the
// filesystem paths, appear nowhere in the answer.

import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { symlink } from 'node:fs/promises'
import http from 'node:http'
import { join } from 'node:path'
import zcopy from '../../lib/index.js'
import { listen, rawExchange, request } from '../support/http.mjs'
import { FILES, SECRET, makeTree } from '../fixtures/http/tree.mjs'

const ATTACKS = [
  ['/../secret/secret.txt', 403],
  ['/..%2fsecret%2fsecret.txt', 403],
  ['/%2e%2e/secret/secret.txt', 403],
  ['/%2E%2E%2Fsecret%2Fsecret.txt', 403],
  ['/.%2e/secret/secret.txt', 403],
  ['/dir/../../secret/secret.txt', 403],
  ['/dir/%2e%2e/%2e%2e/secret/secret.txt', 403],
  ['/' + '../'.repeat(40) + 'etc/passwd', 403],
  ['/..\\secret\\secret.txt', 403],
  ['/%2e%2e%5csecret%5csecret.txt', 403],
  ['/dir\\..\\..\\secret\\secret.txt', 403],
  ['/..%5c..%5csecret', 403],
  ['/%252e%252e/secret/secret.txt', 404], // decoded once: a literal '%2e%2e' name
  ['/hello.txt%00.html', 400],
  ['/%00', 400],
  ['/%', 400],
  ['/%zz/secret.txt', 400],
  ['/%c0%ae%c0%ae/secret/secret.txt', 400], // overlong UTF-8 dots
  ['/link-outside.txt', 404],
  ['/fifo', 404],
  ['/link-outside-dir', 404],
  ['/link-outside-dir/', 404],
  ['/link-outside-dir/secret.txt', 404],
  ['/link-outside-dir/../link-outside-dir/secret.txt', 404],
  ['/link-outside-rel.txt', 404],
  ['/link-outside-dir-rel/secret.txt', 404],
  ['/link-outside-dir-rel/', 404],
  ['//etc/passwd', 404],
  ['/' + 'a'.repeat(5000), 404],
  ['/' + 'a/'.repeat(3000) + 'b', 404],
  ['/' + '%2e'.repeat(300), 404]
].map(([path, status]) => ({ path, status, label: path.length > 60 ? `${path.slice(0, 40)}… (${path.length} chars)` : path }))

let tree, app

function finalHandler (req, res) {
  return (err) => {
    res.statusCode = err ? err.status || 500 : 404
    res.end(http.STATUS_CODES[res.statusCode])
  }
}

function expectNothingRevealed (answer) {
  const everything = answer.body.toString('latin1') + JSON.stringify(answer.headers)
  expect(everything).not.toContain(SECRET)
  expect(everything).not.toContain(tree.base)
}

// Links below the root beside the fixture's: relative and absolute, to files and
// directories, staying inside the root or leaving it.
const LINKS_INSIDE = {
  'link-inside.txt': 'hello.txt', // the fixture's own, relative
  'link-inside-abs.txt': (root) => join(root, 'hello.txt'),
  'link-inside-up.txt': '../root/hello.txt', // leaves by name, lands back inside
  'link-inside-dir': 'dir',
  'link-inside-dir-abs': (root) => join(root, 'dir')
}

beforeAll(async () => {
  tree = await makeTree()
  for (const [name, target] of Object.entries(LINKS_INSIDE)) {
    if (name !== 'link-inside.txt') await symlink(typeof target === 'function' ? target(tree.root) : target, join(tree.root, name))
  }
  await symlink('../secret/secret.txt', join(tree.root, 'link-outside-rel.txt'))
  await symlink('../secret', join(tree.root, 'link-outside-dir-rel'))
  await symlink(tree.root, join(tree.base, 'root-link')) // a root that is itself a symlink
})

afterAll(async () => {
  await tree.cleanup()
})

describe.each([
  ['defaults', {}],
  ['dotfiles allowed, extensions', { dotfiles: 'allow', extensions: ['txt'] }]
])('attack paths against serveStatic (%s, fallthrough off)', (name, options) => {
  beforeAll(async () => {
    const serve = zcopy.serveStatic(tree.root, { ...options, fallthrough: false })
    app = await listen((req, res) => serve(req, res, finalHandler(req, res)))
  })
  afterAll(() => app.close())

  test.each(ATTACKS)('$label → $status', async ({ path, status }) => {
    for (const method of ['GET', 'HEAD']) {
      const answer = await request(app.port, path, { method })
      expect(answer.status).toBe(status)
      expectNothingRevealed(answer)
    }
  })

  test('raw request lines the client library would refuse', async () => {
    for (const target of ['/..%00/secret/secret.txt', '/\0../secret/secret.txt', '/../../secret/secret.txt']) {
      const answer = await rawExchange(app.port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const text = answer.toString('latin1')
      expect(text).toMatch(/^HTTP\/1\.1 40[034] /)
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain(tree.base)
    }
  })
})

test('fallthrough on: attacks reach the next handler, never the file', async () => {
  const serve = zcopy.serveStatic(tree.root)
  const server = await listen((req, res) => serve(req, res, () => {
    res.statusCode = 404
    res.end('next')
  }))
  try {
    for (const { path } of ATTACKS) {
      const answer = await request(server.port, path)
      expect(answer.body.toString()).toBe('next')
    }
  } finally {
    await server.close()
  }
})

test('dotfiles: ignore hides them (404), deny refuses them (403), on every segment', async () => {
  const paths = ['/.hidden', '/.hiddendir/file.txt', '/dir/..%2f.hidden', '/.hiddendir/', '/.hiddendir']
  for (const [dotfiles, status] of [['ignore', 404], ['deny', 403]]) {
    const serve = zcopy.serveStatic(tree.root, { dotfiles, fallthrough: false })
    const server = await listen((req, res) => serve(req, res, finalHandler(req, res)))
    try {
      for (const path of paths) expect((await request(server.port, path)).status).toBe(status)
    } finally {
      await server.close()
    }
  }
})

test('a symlink out of root is served only when allowSymlinksOutsideRoot is set', async () => {
  const serve = zcopy.serveStatic(tree.root, { allowSymlinksOutsideRoot: true, fallthrough: false })
  const server = await listen((req, res) => serve(req, res, finalHandler(req, res)))
  try {
    expect((await request(server.port, '/link-outside.txt')).body.toString()).toBe(SECRET)
    expect((await request(server.port, '/link-outside-dir/secret.txt')).body.toString()).toBe(SECRET)
    expect((await request(server.port, '/link-inside.txt')).body.toString()).toBe('hello world\n')
    expect((await request(server.port, '/fifo')).status).toBe(404) // still only regular files
  } finally {
    await server.close()
  }
})

test('sendFile with a root confines its path the same way', async () => {
  const server = await listen((req, res) => {
    const path = decodeURIComponent(req.url.slice(1))
    zcopy.sendFile(req, res, path, { root: tree.root }).catch(finalHandler(req, res))
  })
  try {
    for (const [path, status] of [
      ['../secret/secret.txt', 403],
      ['dir/../../secret/secret.txt', 403],
      ['link-outside.txt', 404],
      ['hello.txt\0', 400],
      ['.hidden', 404],
      ['hello.txt', 200]
    ]) {
      const answer = await request(server.port, '/' + encodeURIComponent(path))
      expect({ path, status: answer.status }).toEqual({ path, status })
      expectNothingRevealed(answer)
    }
  } finally {
    await server.close()
  }
})

describe.each([
  ['serveStatic', (root) => {
    const serve = zcopy.serveStatic(root, { fallthrough: false })
    return (req, res) => serve(req, res, finalHandler(req, res))
  }],
  ['sendFile with a root', (root) => (req, res) => {
    zcopy.sendFile(req, res, decodeURIComponent(req.url), { root }).catch(finalHandler(req, res))
  }]
])('%s', (name, makeHandler) => {
  test.each([
    ['the root', () => tree.root],
    ['a root that is a symlink to it', () => join(tree.base, 'root-link')]
  ])('symlinks that stay inside the root are served; ones that leave it are refused (%s)', async (_, rootOf) => {
    const server = await listen(makeHandler(rootOf()))
    try {
      for (const path of ['/hello.txt', '/link-inside.txt', '/link-inside-abs.txt', '/link-inside-up.txt']) {
        const answer = await request(server.port, path)
        expect({ path, status: answer.status, body: answer.body.toString() }).toEqual({ path, status: 200, body: FILES['hello.txt'] })
      }
      for (const path of ['/link-inside-dir/plain.txt', '/link-inside-dir-abs/plain.txt']) {
        const answer = await request(server.port, path)
        expect({ path, status: answer.status, body: answer.body.toString() }).toEqual({ path, status: 200, body: FILES['dir/plain.txt'] })
      }
      for (const path of ['/link-outside.txt', '/link-outside-rel.txt', '/link-outside-dir/secret.txt', '/link-outside-dir-rel/secret.txt', '/fifo']) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await request(server.port, path, { method })
          expect({ path, status: answer.status }).toEqual({ path, status: 404 })
          expectNothingRevealed(answer)
        }
      }
    } finally {
      await server.close()
    }
  })
})

test('directory redirects: a link to a directory inside the root redirects, one out of it is refused', async () => {
  const serve = zcopy.serveStatic(tree.root, { fallthrough: false })
  const server = await listen((req, res) => serve(req, res, finalHandler(req, res)))
  try {
    for (const path of ['/link-inside-dir', '/link-inside-dir-abs', '/dir']) {
      const answer = await request(server.port, path)
      expect({ path, status: answer.status, location: answer.headers.location }).toEqual({ path, status: 301, location: path + '/' })
    }
    for (const path of ['/link-outside-dir', '/link-outside-dir-rel']) {
      const answer = await request(server.port, path)
      expect({ path, status: answer.status }).toEqual({ path, status: 404 })
      expectNothingRevealed(answer)
    }
  } finally {
    await server.close()
  }
})

test('a precompressed sibling that links out of the root is never sent: the file itself is', async () => {
  await symlink(tree.secretPath, join(tree.root, 'hello.txt.gz'))
  const serve = zcopy.serveStatic(tree.root, { precompressed: true, fallthrough: false })
  const server = await listen((req, res) => serve(req, res, finalHandler(req, res)))
  try {
    const answer = await request(server.port, '/hello.txt', { headers: { 'accept-encoding': 'gzip' } })
    expect(answer.status).toBe(200)
    expect(answer.headers['content-encoding']).toBeUndefined()
    expect(answer.body.toString()).toBe(FILES['hello.txt'])
    expectNothingRevealed(answer)
  } finally {
    await server.close()
  }
})

test('sendFile without a root: a FIFO at an absolute path is refused at once, like the stat path', async () => {
  const server = await listen((req, res) => {
    zcopy.sendFile(req, res, join(tree.root, decodeURIComponent(req.url))).catch(finalHandler(req, res))
  })
  try {
    expect((await request(server.port, '/fifo')).status).toBe(404)
    expect((await request(server.port, '/hello.txt')).body.toString()).toBe(FILES['hello.txt'])
  } finally {
    await server.close()
  }
})
