'use strict'

// One line per request once its response is over:
//   GET /video.mp4 200 1048576 B 3.2 ms zero-copy
//   GET /missing 404 10 B 0.4 ms stream
//   HEAD /video.mp4 200 0 B 0.9 ms no-body
//   GET /big.iso 200 734003200 B 812.0 ms zero-copy aborted
// Bytes are the body length the response announced. Whether the body went
// by sendfile is inferred (the HTTP layer does not report it per response):
// a file body (200/206 to GET) while the native binding is loaded.

const NO_BODY_STATUSES = new Set([204, 304])

function bodyBytes (req, res) {
  if (req.method === 'HEAD' || NO_BODY_STATUSES.has(res.statusCode)) return 0
  return Number(res.getHeader('content-length')) || 0
}

function formatRequestLine ({ method, path, status, bytes, ms, zeroCopy, aborted }) {
  const how = bytes === 0 ? 'no-body' : zeroCopy ? 'zero-copy' : 'stream'
  return `${method} ${path} ${status} ${bytes} B ${ms.toFixed(1)} ms ${how}${aborted ? ' aborted' : ''}`
}

// Calls write(line) when `res` closes, finished or not.
function logRequest (req, res, { zeroCopyAvailable, write }) {
  const start = process.hrtime.bigint()
  res.once('close', () => {
    const bytes = bodyBytes(req, res)
    write(formatRequestLine({
      method: req.method,
      path: req.url,
      status: res.statusCode,
      bytes,
      ms: Number(process.hrtime.bigint() - start) / 1e6,
      zeroCopy: zeroCopyAvailable && req.method === 'GET' && (res.statusCode === 200 || res.statusCode === 206) && bytes > 0,
      aborted: !res.writableFinished
    }))
  })
}

module.exports = { logRequest }
