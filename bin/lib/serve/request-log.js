'use strict'

// One line per request once its response is over:
//   GET /video.mp4 200 1048576 B 3.2 ms zero-copy
//   GET /missing 404 10 B 0.4 ms stream
//   HEAD /video.mp4 200 0 B 0.9 ms no-body
//   GET /big.iso 200 734003200 B 812.0 ms zero-copy aborted
// Bytes are the body length the response announced. Whether the body went by
// sendfile is what serveStatic's onSent reported for this response (see
// createRequestLog); a response it did not report on went by stream or had none.

const NO_BODY_STATUSES = new Set([204, 304])

function bodyBytes (req, res) {
  if (req.method === 'HEAD' || NO_BODY_STATUSES.has(res.statusCode)) return 0
  return Number(res.getHeader('content-length')) || 0
}

function formatRequestLine ({ method, path, status, bytes, ms, zeroCopy, aborted }) {
  const how = bytes === 0 ? 'no-body' : zeroCopy ? 'zero-copy' : 'stream'
  return `${method} ${path} ${status} ${bytes} B ${ms.toFixed(1)} ms ${how}${aborted ? ' aborted' : ''}`
}

// → { onSent, logRequest }: pass onSent to serveStatic, and call
// logRequest(req, res) as each request arrives; it writes one line when the
// response closes, finished or not.
function createRequestLog (write) {
  const zeroCopyResponses = new WeakSet()
  return {
    onSent (res, { zeroCopy }) {
      if (zeroCopy) zeroCopyResponses.add(res)
    },
    logRequest (req, res) {
      const start = process.hrtime.bigint()
      res.once('close', () => {
        write(formatRequestLine({
          method: req.method,
          path: req.url,
          status: res.statusCode,
          bytes: bodyBytes(req, res),
          ms: Number(process.hrtime.bigint() - start) / 1e6,
          zeroCopy: zeroCopyResponses.has(res),
          aborted: !res.writableFinished
        }))
      })
    }
  }
}

module.exports = { createRequestLog }
