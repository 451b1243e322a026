// What reaches Express' error handler: zcopy.serveStatic and express.static (the
// real serve-static → send → http-errors) side by side, for every way a request
// can fail, must hand over the same error: same class shape (name, status,
// statusCode, expose, message, own properties) and, when a file-system error is
// the cause, that very error (code, errno, syscall, path, a stack). sendFile is
// compared with send used directly, the same way.

import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import express from 'express'
import createError from 'http-errors'
import send from 'send'
import serveStatic from 'serve-static'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { makeTree } from '../fixtures/http/tree.mjs'

let tree

beforeAll(async () => {
  tree = await makeTree()
  await mkdir(join(tree.root, 'section.html')) // a directory where `extensions` looks for a file
})
afterAll(() => tree.cleanup())

// Everything an error handler may look at, as JSON (the stack's frames name
// different files; its first line and its presence are compared).
function describeError (err) {
  return {
    isError: err instanceof Error,
    isHttpError: createError.isHttpError(err),
    name: err.name,
    status: err.status,
    statusCode: err.statusCode,
    expose: err.expose,
    message: err.message,
    code: err.code,
    errno: err.errno,
    syscall: err.syscall,
    path: err.path,
    headers: err.headers,
    keys: Object.keys(err).sort(),
    stackHead: typeof err.stack === 'string' ? err.stack.split('\n')[0] : null,
    // A system error's stack shows no frames (send's come from async fs calls):
    // none of the server's files on a development error page.
    systemErrorFrames: err.code && typeof err.stack === 'string' ? err.stack.split('\n').length - 1 : null
  }
}

// The app: the middleware under test, then an error handler that reports what it
// got (and whether zcopy's exported class recognises it).
function appWith (middleware) {
  return express()
    .use(middleware)
    .use((req, res) => res.status(299).json({ fellThrough: true }))
    .use((err, req, res, next) => {
      res.status(200).json({ ...describeError(err), zcopyHttpError: err instanceof zcopy.HttpError })
    })
}

async function sideBySide (options, run) {
  const theirs = await listen(appWith(serveStatic(tree.root, options)))
  const ours = await listen(appWith(zcopy.serveStatic(tree.root, options)))
  try {
    await run(async (path, headers = {}) => {
      const [a, b] = await Promise.all([request(theirs.port, path, { headers }), request(ours.port, path, { headers })])
      return { theirs: { status: a.status, err: JSON.parse(a.body) }, ours: { status: b.status, err: JSON.parse(b.body) } }
    })
  } finally {
    await Promise.all([theirs.close(), ours.close()])
  }
}

const LONG_NAME = 'n'.repeat(300)

// [label, options, path, request headers, expected { status, name, code }]
const CASES = [
  ['missing file', {}, '/missing.txt', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['missing file, no extension', {}, '/missing', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['missing file, extensions tried', { extensions: ['html', 'txt'] }, '/missing', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['extension candidate is a directory', { extensions: ['html'] }, '/section', {}, { status: 404, name: 'NotFoundError' }],
  ['missing directory component (ENOTDIR)', {}, '/hello.txt/more.txt', {}, { status: 404, name: 'Error', code: 'ENOTDIR' }],
  ['a file with a trailing slash (ENOTDIR)', {}, '/hello.txt/', {}, { status: 404, name: 'Error', code: 'ENOTDIR' }],
  ['a file with a trailing slash, no index', { index: false }, '/hello.txt/', {}, { status: 404, name: 'Error', code: 'ENOTDIR' }],
  ['name too long', {}, '/' + LONG_NAME, {}, { status: 404, name: 'Error', code: 'ENAMETOOLONG' }],
  ['name too long, with extension', {}, '/' + LONG_NAME + '.txt', {}, { status: 404, name: 'Error', code: 'ENAMETOOLONG' }],
  ['missing directory, index', {}, '/nope/', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['directory without its index', {}, '/empty-dir/', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['missing directory, no index', { index: false }, '/nope/', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['directory, redirect off', { redirect: false }, '/dir', {}, { status: 404, name: 'NotFoundError' }],
  ['directory with slash, no index', { index: false }, '/dir/', {}, { status: 404, name: 'NotFoundError' }],
  ['dotfile, deny', { dotfiles: 'deny' }, '/.hidden', {}, { status: 403, name: 'ForbiddenError' }],
  ['dotfile directory, deny', { dotfiles: 'deny' }, '/.hiddendir/file.txt', {}, { status: 403, name: 'ForbiddenError' }],
  ['dotfile, ignore', {}, '/.hidden', {}, { status: 404, name: 'NotFoundError' }],
  ['missing dotfile, allow', { dotfiles: 'allow' }, '/.nothing', {}, { status: 404, name: 'Error', code: 'ENOENT' }],
  ['malformed %-encoding', {}, '/%E0%A4%A', {}, { status: 400, name: 'BadRequestError' }],
  ['lone %', {}, '/%', {}, { status: 400, name: 'BadRequestError' }],
  ['.. segment', {}, '/../secret/secret.txt', {}, { status: 403, name: 'ForbiddenError' }],
  ['encoded .. segment', {}, '/..%2fsecret%2fsecret.txt', {}, { status: 403, name: 'ForbiddenError' }],
  ['encoded dots', {}, '/%2e%2e/secret/secret.txt', {}, { status: 403, name: 'ForbiddenError' }],
  ['NUL byte', {}, '/hello%00.txt', {}, { status: 400, name: 'BadRequestError' }],
  ['unsatisfiable range', {}, '/hello.txt', { range: 'bytes=100-' }, { status: 416, name: 'RangeNotSatisfiableError' }],
  ['failed precondition', {}, '/hello.txt', { 'if-match': '"other"' }, { status: 412, name: 'PreconditionFailedError' }]
]

describe('next(err) with fallthrough: false — the same error as express.static', () => {
  test('express.static is serve-static', () => {
    expect(express.static).toBe(serveStatic)
  })

  test.each(CASES)('%s', async (label, options, path, headers, expected) => {
    await sideBySide({ ...options, fallthrough: false }, async (get) => {
      const { theirs, ours } = await get(path, headers)
      expect(theirs.status).toBe(200) // their error handler ran
      expect(ours.status).toBe(200)
      const { zcopyHttpError, ...theirError } = theirs.err
      const { zcopyHttpError: recognised, ...ourError } = ours.err
      expect(ourError).toEqual(theirError)
      expect(ourError.name).toBe(expected.name)
      expect(ourError.status).toBe(expected.status)
      expect(ourError.statusCode).toBe(expected.status)
      expect(ourError.isError).toBe(true)
      expect(ourError.isHttpError).toBe(true)
      expect(recognised).toBe(true)
      expect(ourError.stackHead).toBe(`${ourError.name}: ${ourError.message}`)
      if (expected.code === undefined) {
        // http-errors' own: the status text, shown to the client
        expect(ourError.expose).toBe(true)
        expect(ourError.code).toBeUndefined()
        expect(ourError.message).toBe(createError(expected.status).message)
      } else {
        // the file-system error itself: its code, path and stack, not shown
        expect(ourError.expose).toBe(false)
        expect(ourError.code).toBe(expected.code)
        expect(ourError.syscall).toBe('stat')
        expect(ourError.message.startsWith(`${expected.code}: `)).toBe(true)
        expect(ourError.path.startsWith(tree.root)).toBe(true)
      }
    })
  })

  test('416 carries Content-Range in err.headers, as send\'s does', async () => {
    await sideBySide({ fallthrough: false }, async (get) => {
      const { theirs, ours } = await get('/hello.txt', { range: 'bytes=100-' })
      expect(ours.err.headers).toEqual({ 'Content-Range': 'bytes */12' })
      expect(ours.err.headers).toEqual(theirs.err.headers)
    })
  })
})

describe('zcopy only (express.static serves these)', () => {
  test.each([
    ['a symbolic link out of the root', '/link-outside.txt'],
    ['a directory link out of the root', '/link-outside-dir'],
    ['a FIFO (send would block opening it)', '/fifo']
  ])('%s: a NotFoundError, as if it did not exist', async (label, path) => {
    const app = await listen(appWith(zcopy.serveStatic(tree.root, { fallthrough: false })))
    try {
      const { status, body } = await request(app.port, path)
      expect(status).toBe(200)
      const err = JSON.parse(body)
      expect([err.name, err.status, err.statusCode, err.expose, err.message]).toEqual(['NotFoundError', 404, 404, true, 'Not Found'])
      expect(err.zcopyHttpError).toBe(true)
    } finally {
      await app.close()
    }
  })
})

describe('with fallthrough (the default): misses reach next() with no error, as express.static', () => {
  test.each(CASES)('%s', async (label, options, path, headers, expected) => {
    await sideBySide(options, async (get) => {
      const { theirs, ours } = await get(path, headers)
      expect(ours.status).toBe(theirs.status)
      const { zcopyHttpError, ...theirError } = theirs.err
      const { zcopyHttpError: recognised, ...ourError } = ours.err
      expect(ourError).toEqual(theirError)
      // a file was found for 412/416: the error is forwarded; anything else falls through
      expect(ours.status).toBe(expected.status === 412 || expected.status === 416 ? 200 : 299)
      if (ours.status === 200) expect(recognised).toBe(true)
    })
  })
})

describe('sendFile rejects with what send emits', () => {
  // send(req, path, { root }) with an 'error' listener hands over createHttpError's
  // error, as serve-static forwards it; sendFile rejects with it.
  async function pair (path, headers = {}, options = {}) {
    const report = (res, err) => res.end(JSON.stringify(describeError(err)))
    const theirs = await listen((req, res) => {
      send(req, decodeURIComponentSafe(req.url), { root: tree.root, ...options })
        .on('error', (err) => report(res, err))
        .on('directory', () => report(res, createError(404)))
        .pipe(res)
    })
    const ours = await listen((req, res) => {
      zcopy.sendFile(req, res, decodeURIComponentSafe(req.url), { root: tree.root, ...options }).catch((err) => report(res, err))
    })
    try {
      const [a, b] = await Promise.all([request(theirs.port, path, { headers }), request(ours.port, path, { headers })])
      return { theirs: JSON.parse(a.body), ours: JSON.parse(b.body) }
    } finally {
      await Promise.all([theirs.close(), ours.close()])
    }
  }

  // send decodes the path itself; sendFile takes a file-system path. Both get the
  // decoded path here, so a malformed encoding is not part of this comparison.
  function decodeURIComponentSafe (url) {
    try {
      return decodeURIComponent(url)
    } catch {
      return url
    }
  }

  test.each([
    ['/missing.txt', {}, {}],
    ['/hello.txt/x', {}, {}],
    ['/' + LONG_NAME, {}, {}],
    ['/nope/', {}, {}],
    ['/.hidden', {}, { dotfiles: 'deny' }],
    ['/.hidden', {}, {}],
    ['/hello.txt', { range: 'bytes=100-' }, {}],
    ['/hello.txt', { 'if-match': '"x"' }, {}]
  ])('%s %o %o', async (path, headers, options) => {
    const { theirs, ours } = await pair(path, headers, options)
    expect(ours).toEqual(theirs)
    expect(ours.isHttpError).toBe(true)
  })
})

describe('the exported class', () => {
  test('HttpError: instanceof holds for http-errors instances and for decorated fs errors; new makes http-errors\' error', () => {
    const notFound = new zcopy.HttpError(404)
    expect(notFound).toBeInstanceOf(createError.NotFound)
    expect(notFound).toBeInstanceOf(createError.HttpError)
    expect(notFound).toBeInstanceOf(zcopy.HttpError)
    expect(notFound).toBeInstanceOf(Error)
    expect(notFound.name).toBe('NotFoundError')
    expect([notFound.status, notFound.statusCode, notFound.expose, notFound.message]).toEqual([404, 404, true, 'Not Found'])
    const range = new zcopy.HttpError(416, { headers: { 'Content-Range': 'bytes */1' } })
    expect(range.name).toBe('RangeNotSatisfiableError')
    expect(range.headers).toEqual({ 'Content-Range': 'bytes */1' })
    const fsError = createError(404, Object.assign(new Error('ENOENT: x'), { code: 'ENOENT' }), { expose: false })
    expect(fsError).toBeInstanceOf(zcopy.HttpError)
    expect(zcopy.isHttpError(fsError)).toBe(true)
    expect(new Error('plain')).not.toBeInstanceOf(zcopy.HttpError)
    expect(zcopy.isHttpError(new Error('plain'))).toBe(false)
    expect(() => zcopy.HttpError(404)).toThrow(TypeError)
  })
})
