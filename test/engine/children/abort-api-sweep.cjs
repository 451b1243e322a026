'use strict'
// Calls every public function of zcopy with bad arguments of every type, one
// parameter or option at a time (the others valid), and records what each call
// did: threw synchronously, rejected, resolved/returned, or hung. Counts
// 'uncaughtException' and 'unhandledRejection' (attributed to the case that ran
// last) instead of dying of them. Prints one JSON line.
// argv: <zcopy lib/index.js> <work dir: the cwd, files are created in it>

const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const { once } = require('node:events')

const [libPath, workDir] = process.argv.slice(2)
process.chdir(workDir) // a string destination is a path: files land here
const zcopy = require(libPath)

const escaped = []
let current = 'startup'
process.on('uncaughtException', (err) => { escaped.push({ kind: 'uncaughtException', during: current, error: String(err && err.stack) }) })
process.on('unhandledRejection', (err) => { escaped.push({ kind: 'unhandledRejection', during: current, error: String(err && err.stack) }) })

const { BAD } = require('../../support/bad-values.cjs')

const HANG_MS = 3000
const file = path.join(workDir, 'source.bin')
fs.writeFileSync(file, Buffer.alloc(1000, 'x'))
const inFd = fs.openSync(file, 'r')
const outFd = fs.openSync('/dev/null', 'w')

function describeError (err) {
  if (err === null || typeof err !== 'object') return { name: typeof err, code: undefined, message: String(err) }
  return { name: err.constructor && err.constructor.name, code: err.code, message: String(err.message).slice(0, 200) }
}

// → { outcome: 'throw' | 'reject' | 'resolve' | 'return' | 'hang', ...error }
async function observe (call) {
  let result
  try {
    result = call()
  } catch (err) {
    return { outcome: 'throw', ...describeError(err) }
  }
  if (!result || typeof result.then !== 'function') return { outcome: 'return', value: result }
  let timer
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve({ outcome: 'hang' }), HANG_MS) })
  const settled = result.then(() => ({ outcome: 'resolve' }), (err) => ({ outcome: 'reject', ...describeError(err) }))
  const outcome = await Promise.race([settled, timeout])
  clearTimeout(timer)
  return outcome
}

const results = []
async function sweep (fn, param, call) {
  for (const [label, value] of Object.entries(BAD)) {
    current = `${fn} ${param} = ${label}`
    const outcome = await observe(() => call(value))
    results.push({ fn, param, value: label, ...outcome })
    await new Promise((resolve) => setImmediate(resolve))
  }
}

// A ReadStream that was created is consumed to its end (or error) and closed.
async function drainStream (stream) {
  if (!stream || typeof stream.on !== 'function') return stream
  let error = null
  stream.on('error', (err) => { error = err })
  stream.resume()
  await Promise.race([once(stream, 'close'), new Promise((resolve) => setTimeout(resolve, HANG_MS))])
  if (!stream.destroyed) {
    stream.destroy()
    throw Object.assign(new Error('stream did not close'), { code: 'HANG' })
  }
  if (error) throw error
}

async function withRequest (server, handle) {
  const { port } = server.address()
  const handled = new Promise((resolve) => { server.once('request', (req, res) => resolve(handle(req, res))) })
  const request = http.get({ port, host: '127.0.0.1', path: '/source.bin' }, (response) => response.resume())
  request.on('error', () => {})
  const outcome = await handled
  request.destroy()
  return outcome
}

async function main () {
  // sendfile(outFd, inFd, offset, length, options)
  const sendfileArgs = () => [outFd, inFd, 0, 10, {}]
  for (const [i, name] of ['outFd', 'inFd', 'offset', 'length', 'options'].entries()) {
    await sweep('sendfile', name, (v) => { const a = sendfileArgs(); a[i] = v; return zcopy.sendfile(...a) })
  }
  for (const key of ['signal', 'onProgress']) {
    await sweep('sendfile', `options.${key}`, (v) => zcopy.sendfile(outFd, inFd, 0, 10, { [key]: v }))
  }

  // pipeFile(source, destination, options)
  const pipeArgs = () => [file, '/dev/null', {}]
  for (const [i, name] of ['source', 'destination', 'options'].entries()) {
    await sweep('pipeFile', name, (v) => { const a = pipeArgs(); a[i] = v; return zcopy.pipeFile(...a) })
  }
  for (const key of ['start', 'end', 'head', 'signal', 'onProgress']) {
    await sweep('pipeFile', `options.${key}`, (v) => zcopy.pipeFile(file, '/dev/null', { [key]: v }))
  }

  // The same signals on a transfer to a socket whose peer stalls, then resets:
  // whatever the signal did, the transfer's own failure must not escape.
  const big = path.join(workDir, 'big.bin')
  fs.writeFileSync(big, Buffer.alloc(32 * 1024 * 1024))
  const resetting = net.createServer((socket) => {
    socket.on('error', () => {})
    socket.pause()
    setTimeout(() => socket.destroy(), 100)
  })
  resetting.listen(0, '127.0.0.1')
  await once(resetting, 'listening')
  await sweep('pipeFile', 'options.signal (to a socket reset mid-transfer)', async (v) => {
    const socket = net.connect(resetting.address().port, '127.0.0.1')
    socket.on('error', () => {})
    await once(socket, 'connect')
    try {
      return await zcopy.pipeFile(big, socket, { signal: v })
    } finally {
      await new Promise((resolve) => setTimeout(resolve, 150))
      socket.destroy()
    }
  })
  resetting.close()

  // createReadStream(path, options): a stream that was made must end or error.
  const streamed = (make) => (v) => {
    const stream = make(v)
    return drainStream(stream)
  }
  await sweep('createReadStream', 'path', streamed((v) => zcopy.createReadStream(v)))
  await sweep('createReadStream', 'options', streamed((v) => zcopy.createReadStream(file, v)))
  for (const key of ['start', 'end', 'highWaterMark', 'encoding', 'fd', 'flags', 'signal', 'fs', 'autoClose']) {
    await sweep('createReadStream', `options.${key}`, streamed((v) => zcopy.createReadStream(file, { [key]: v })))
  }

  // sendFile(req, res, path, options) and serveStatic(root, options) on a real server.
  const server = http.createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const finishResponse = (res) => { if (!res.writableEnded && !res.destroyed) res.destroy() }
  for (const [i, name] of ['req', 'res', 'path', 'options'].entries()) {
    await sweep('sendFile', name, (v) => withRequest(server, (req, res) => {
      const args = [req, res, file, {}]
      args[i] = v
      return observe(() => zcopy.sendFile(...args)).then((outcome) => {
        finishResponse(res)
        if (outcome.outcome === 'throw') throw Object.assign(new Error(outcome.message), outcome)
        if (outcome.outcome === 'reject') return Promise.reject(Object.assign(new Error(outcome.message), outcome))
        if (outcome.outcome === 'hang') return new Promise(() => {})
      })
    }))
  }
  const options = ['root', 'dotfiles', 'etag', 'extensions', 'index', 'maxAge', 'setHeaders', 'onSent', 'acceptRanges', 'cacheControl', 'lastModified', 'immutable', 'precompressed']
  for (const key of options) {
    await sweep('sendFile', `options.${key}`, (v) => withRequest(server, (req, res) => {
      // A bad option throws at once: taken as the rejection it is reported as.
      return new Promise((resolve) => resolve(zcopy.sendFile(req, res, key === 'root' ? 'source.bin' : file, { [key]: v })))
        .finally(() => finishResponse(res))
    }))
  }
  // serveStatic(root, options) → middleware, then one request through it.
  const throughMiddleware = (makeOptions, root = workDir) => (v) => {
    const middleware = zcopy.serveStatic(root === undefined ? v : root, makeOptions(v))
    return withRequest(server, (req, res) => new Promise((resolve, reject) => {
      res.on('finish', resolve)
      middleware(req, res, (err) => { finishResponse(res); err ? reject(err) : resolve() })
    })).finally(() => middleware.close && middleware.close())
  }
  await sweep('serveStatic', 'root', (v) => {
    const middleware = zcopy.serveStatic(v)
    if (middleware.close) middleware.close()
    return middleware
  })
  await sweep('serveStatic', 'options', throughMiddleware((v) => v))
  for (const key of [...options.filter((k) => k !== 'root'), 'fallthrough', 'redirect', 'maxOpenFiles']) {
    await sweep('serveStatic', `options.${key}`, throughMiddleware((v) => ({ [key]: v })))
  }
  server.close()

  current = 'after the sweep'
  await new Promise((resolve) => setTimeout(resolve, 500))
  fs.closeSync(inFd)
  fs.closeSync(outFd)
  // Exit once the report is out: stdout is a pipe, and process.exit() drops what
  // the reader has not taken yet (the report is larger than the pipe's buffer).
  process.stdout.write(JSON.stringify({ results, escaped }) + '\n', () => process.exit(0))
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ failed: String(err && err.stack), escaped }) + '\n', () => process.exit(3))
})
