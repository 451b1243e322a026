'use strict'

// How zcopy/koa's answers leave: through Koa, as koa-static's do. The status
// goes to ctx.status, the headers stay on the response (Koa's ctx.set writes
// there too), and the body becomes ctx.body: a FileBody (a Readable with the
// file's `path`, as koa-send's fs.ReadStream has), a Buffer view with `path`
// for a body from the memory cache. Middleware after `await next()` sees them
// and may replace them (koa-compress); the file is released once its body is
// done, replaced or its client gone.
//
// Left as it is, the FileBody is sent by zcopy (sendfile where it can), not
// piped by Koa: Koa answers a stream body with stream.pipeline, which ends the
// response on the stream's 'end' and calls a response closed before that a
// premature close, while a client may see a sendfile'd body complete, and
// close, before the server hears that the transfer is done. Koa reads
// `ctx.respond` once every middleware is done, right before it answers; zcopy
// defines it on the context it answers, and there sends an untouched body
// itself and tells Koa that it answered (false). Whatever else `ctx.respond`
// is set to is kept and returned.

const { FileBody, bytesBody } = require('../../http')

// The state of the answer on its raw response: { ctx, handedOver }. A symbol
// of zcopy's own, not a WeakMap: a weak map's entries are traced apart by the
// garbage collector, and one entry per request made it a visible part of a
// small file's cost (docs/benchmarks-log.md, "zcopy/koa through Koa, and a
// WeakMap per request").
const ANSWER = Symbol('zcopy/koa answer')

// The context answering its response from now on (see ../koa.js): → its state,
// whose `handedOver` turns true once the answer went to Koa.
function answering (ctx) {
  const state = { ctx, handedOver: false }
  ctx.res[ANSWER] = state
  return state
}

// Koa's status from the response's (Koa presets 404; the handler set the
// file's), and the body, which Koa's setter leaves the file's headers with. Set
// on ctx.response, which ctx.status and ctx.body delegate to.
function handOver (res, body) {
  const state = res[ANSWER]
  state.handedOver = true
  const { ctx } = state
  const { response } = ctx
  response.status = res.statusCode
  if (body !== undefined) response.body = body
  return ctx
}

// A FileBody whose failure once something reads it (a compression stream) is
// the application's error, as a failed transfer is: Koa 3 does not listen to
// a stream body's errors itself, and the response cannot be completed. Listened
// to from the first read: a body sent straight never emits one.
class KoaFileBody extends FileBody {
  constructor (ctx, req, res, file, ownEncoding) {
    super(req, res, file, ownEncoding)
    this.ctx = ctx
    this.reporting = false
  }

  _read () {
    if (!this.reporting) {
      this.reporting = true
      this.once('error', (err) => {
        this.ctx.onerror(err)
        if (!this.res.writableEnded) this.res.destroy()
      })
    }
    super._read()
  }
}

function sendWhenKoaResponds (ctx, body) {
  let respond = ctx.respond
  Object.defineProperty(ctx, 'respond', {
    configurable: true,
    enumerable: true,
    get () {
      if (respond !== false && ctx.response.body === body && body.canSendStraight()) {
        respond = false
        body.sendStraight()
      }
      return respond
    },
    set (value) { respond = value }
  })
}

function fileBody (req, res, file, ownEncoding) {
  const state = res[ANSWER]
  const body = new KoaFileBody(state.ctx, req, res, file, ownEncoding)
  const ctx = handOver(res, body)
  sendWhenKoaResponds(ctx, body)
  return body
}

const KOA_DELIVERY = Object.freeze({
  handsOver: true,
  // 304 has no body (Koa ends it). HEAD and an empty range get an empty
  // FileBody: with none, Koa would answer a GET with its status message.
  none (req, res, path) {
    if (res.statusCode === 304) handOver(res)
    else fileBody(req, res, { path })
  },
  bytes (req, res, path, bytes) {
    handOver(res, bytesBody(bytes, path))
  },
  file (req, res, entry, { start, end }, ownEncoding) {
    return fileBody(req, res, { path: entry.path, fd: entry.fd, start, end }, ownEncoding).done
  },
  // Sending the body straight failed midway (the response is destroyed): Koa's
  // error reporting, app.on('error'), hears it.
  failed (req, res, err) {
    res[ANSWER].ctx.onerror(err)
  }
})

module.exports = { KOA_DELIVERY, answering }
