'use strict'

// Answers a Fastify reply with a file through a zcopy static handler. The
// answer goes out through the reply, as @fastify/static's does: the status
// set with reply.code(), the headers set with reply.header() (by hooks, by the
// route) except those the file itself sets (its Content-Type, validators,
// Cache-Control, Accept-Ranges), then the ones `setHeaders(reply, path, stat)`
// sets, then the plugin's own (precompressed: Vary, Content-Type,
// Content-Encoding); and the body, a FileBody (path: the file's), through
// reply.send(), so that onSend hooks see it and may replace it
// (@fastify/compress). Left as it is, Fastify pipes it into the response and
// zcopy sends it (sendfile where it can).

const { FileBody, bytesBody } = require('../../http')

// The state of the answer on its raw response: { reply, headers, vary,
// handedOver }. A symbol of zcopy's own, not a WeakMap: a weak map's entries,
// one per request, are traced apart by the garbage collector, a visible part
// of a small file's cost (docs/benchmarks-log.md, "zcopy/koa through Koa, and
// a WeakMap per request").
const ANSWER = Symbol('zcopy/fastify answer')

function appendVary (res, field) {
  const current = res.getHeader('vary')
  if (current === undefined) return res.setHeader('vary', field)
  const value = Array.isArray(current) ? current.join(', ') : String(current)
  const tokens = value.split(',').map((token) => token.trim().toLowerCase())
  if (!tokens.includes(field) && !tokens.includes('*')) res.setHeader('vary', value + ', ' + field)
}

// The names of the headers the file sets with `options` (a handler's), over the
// reply's (`contentType: false`: the reply's Content-Type is kept).
function fileHeaderNames (options, contentType) {
  const names = new Set(contentType === false ? ['content-length'] : ['content-type', 'content-length'])
  if (options.cacheControl !== null) names.add('cache-control')
  if (options.etag) names.add('etag')
  if (options.lastModified) names.add('last-modified')
  if (options.acceptRanges) names.add('accept-ranges')
  return names
}

function carryHeaders (reply, except) {
  const raw = reply.raw
  const headers = reply.getHeaders()
  for (const name of Object.keys(headers)) {
    if (headers[name] !== undefined && !except.has(name)) raw.setHeader(name, headers[name])
  }
}

// The handler's setHeaders: runs before zcopy sets the file's headers, which
// leave those set here as they are. One that throws goes to Fastify's error
// handler.
function replySetHeaders (setHeaders) {
  return (res, file, stat) => {
    const state = res[ANSWER]
    if (state === undefined) return
    const { reply } = state
    if (setHeaders !== undefined) {
      const before = { ...reply.getHeaders() }
      setHeaders(reply, file, stat)
      const after = reply.getHeaders()
      for (const name of Object.keys(after)) {
        if (after[name] !== undefined && after[name] !== before[name]) res.setHeader(name, after[name])
      }
    }
    if (state.vary) appendVary(res, 'accept-encoding')
    for (const name of Object.keys(state.headers)) res.setHeader(name, state.headers[name])
  }
}

// The answer's headers, gathered on the raw response, go to the reply (which
// sets them on the raw response again before it writes the head): there onSend
// hooks see them. The status is on the raw response already.
function handOver (res) {
  const state = res[ANSWER]
  state.handedOver = true
  const { reply } = state
  const headers = res.getHeaders()
  for (const name in headers) {
    res.removeHeader(name)
    if (name === 'set-cookie') reply.removeHeader(name) // reply.header() would add to it
    reply.header(name, headers[name])
  }
  return reply
}

// How a file's answer leaves (see ../../http/serving/serve-file.js): to the reply.
const FASTIFY_DELIVERY = Object.freeze({
  handsOver: true,
  // HEAD gets an empty body: Fastify's own HEAD route sets Content-Length 0 for
  // none. 304 and an empty range get none.
  none (req, res, path) {
    const reply = handOver(res)
    if (req.method === 'HEAD') reply.send(new FileBody(req, res, { path }))
    else reply.send()
  },
  bytes (req, res, path, bytes) {
    handOver(res).send(bytesBody(bytes, path))
  },
  file (req, res, entry, { start, end }, ownEncoding) {
    const body = new FileBody(req, res, { path: entry.path, fd: entry.fd, start, end }, ownEncoding)
    handOver(res).send(body)
    return body.done
  },
  // The body failed midway, or onSent threw: see failed() below.
  failed (req, res, err) {
    const state = res[ANSWER]
    failed(state.reply.request, state.reply, state, err)
  }
})

// Once a file is chosen: the reply's status and headers to the raw response.
function carryOnFound (handler, reply, contentType) {
  return () => {
    if (reply.statusCode !== 200) reply.raw.statusCode = reply.statusCode
    carryHeaders(reply, fileHeaderNames(handler.options, contentType))
  }
}

// A failure once the answer went to the reply (its body failed midway, the
// application's onSent threw, or reply.send did): logged, and the response
// destroyed unless it is complete, since the reply may never end it. Before
// that, Fastify's error handler answers.
function failed (request, reply, state, err) {
  if (!state.handedOver) return reply.send(err)
  request.log.error({ err }, 'zcopy: file response failed')
  if (!reply.raw.writableEnded) reply.raw.destroy()
}

// The fast way for a request path: `url` (below the prefix, still encoded, with
// no '%', guards passed) goes to the handler as it is, which remembers what each
// path resolved to. → Promise of true when answered (or failed), false when
// nothing was found there (not found before a file was chosen): then take the
// long way.
function answerWithUrl (handler, request, reply, url, contentType) {
  const state = { reply, headers: {}, vary: false, handedOver: false }
  reply.raw[ANSWER] = state
  return handler.handle(request.raw, reply.raw, {
    url,
    originalUrl: request.raw.url,
    fallsThrough: (err) => err.status === 404,
    onFound: carryOnFound(handler, reply, contentType)
  }).then((answered) => answered, (err) => {
    failed(request, reply, state, err)
    return true
  })
}

// → Promise: settles once answered, never rejected. `file` is a file-system path
// below the handler's root, found a file a moment ago; `headers` and `vary` (add
// Accept-Encoding to Vary) as above, `contentType` the plugin's option. Errors
// met before the file was chosen (it went away or was refused: 404) go to
// `notFound()` (by default Fastify's not-found handler) or the error handler; a
// body that fails midway is logged (FASTIFY_DELIVERY).
function answerWithFile (handler, request, reply, file, { headers = {}, vary = false, contentType, stat, notFound = () => reply.callNotFound() } = {}) {
  const state = { reply, headers, vary, handedOver: false }
  reply.raw[ANSWER] = state
  return handler.handle(request.raw, reply.raw, {
    file,
    stat,
    encoding: headers['content-encoding'],
    fallsThrough: () => false,
    onFound: carryOnFound(handler, reply, contentType)
  }).then(undefined, (err) => {
    if (!state.handedOver && err.status === 404) return notFound()
    return failed(request, reply, state, err)
  })
}

module.exports = { FASTIFY_DELIVERY, answerWithFile, answerWithUrl, replySetHeaders }
