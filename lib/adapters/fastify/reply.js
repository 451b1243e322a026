'use strict'

// Answers a Fastify reply with a file through a zcopy static handler: zcopy
// writes the response itself on the raw response, after reply.hijack(), so
// onSend hooks never see a body. What the reply carries by then goes out with
// the file, as @fastify/static sends it: the status set with reply.code(), the
// headers set with reply.header() (by hooks, by the route) except those the file
// itself sets (its Content-Type, validators, Cache-Control, Accept-Ranges), then
// the ones `setHeaders(reply, path, stat)` sets, then the plugin's own
// (precompressed: Vary, Content-Type, Content-Encoding).

const sending = new WeakMap() // raw response → { reply, headers, vary, hijacked }

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
// leave those set here as they are. The reply is hijacked only then, once the
// app's setHeaders returned: one that throws goes to Fastify's error handler.
function replySetHeaders (setHeaders) {
  return (res, file, stat) => {
    const state = sending.get(res)
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
    state.hijacked = true
    reply.hijack()
  }
}

// Once a file is chosen: the reply's status and headers to the raw response.
function carryOnFound (handler, reply, contentType) {
  return () => {
    if (reply.statusCode !== 200) reply.raw.statusCode = reply.statusCode
    carryHeaders(reply, fileHeaderNames(handler.options, contentType))
  }
}

// A failure once hijacked: Fastify cannot answer any more; the transfer failed
// (the response is destroyed already) or headers were sent by someone else.
function failHijacked (request, reply, err) {
  request.log.error({ err }, 'zcopy: file response failed')
  if (!reply.raw.headersSent && !reply.raw.destroyed) {
    reply.raw.statusCode = 500
    reply.raw.end()
  } else {
    reply.raw.destroy()
  }
}

// The fast way for a request path: `url` (below the prefix, still encoded, with
// no '%', guards passed) goes to the handler as it is, which remembers what each
// path resolved to. → Promise of true when answered (or failed), false when
// nothing was found there (not found before a file was chosen): then take the
// long way.
function answerWithUrl (handler, request, reply, url, contentType) {
  const state = { reply, headers: {}, vary: false, hijacked: false }
  sending.set(reply.raw, state)
  return handler.handle(request.raw, reply.raw, {
    url,
    originalUrl: request.raw.url,
    fallsThrough: (err) => err.status === 404,
    onFound: carryOnFound(handler, reply, contentType)
  }).then((answered) => answered, (err) => {
    if (state.hijacked) failHijacked(request, reply, err)
    else reply.send(err)
    return true
  })
}

// → Promise: settles once answered. `file` is a file-system path below the
// handler's root, found a file a moment ago; `headers` and `vary` (add
// Accept-Encoding to Vary) as above, `contentType` the plugin's option. Errors met before the file was chosen (it
// went away: 404) go to Fastify's not-found or error handler; a transfer that
// fails afterwards is logged and the response ended or destroyed.
function answerWithFile (handler, request, reply, file, { headers = {}, vary = false, contentType, stat } = {}) {
  const state = { reply, headers, vary, hijacked: false }
  sending.set(reply.raw, state)
  return handler.handle(request.raw, reply.raw, {
    file,
    stat,
    encoding: headers['content-encoding'],
    fallsThrough: () => false,
    onFound: carryOnFound(handler, reply, contentType)
  }).then(undefined, (err) => {
    if (state.hijacked) return failHijacked(request, reply, err)
    if (err.status === 404) return reply.callNotFound()
    return reply.send(err)
  })
}

module.exports = { answerWithFile, answerWithUrl, replySetHeaders }
