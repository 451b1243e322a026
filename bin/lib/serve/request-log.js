'use strict'

// One line per request once its response is over:
//   GET /video.mp4 200 1048576 B 3.2 ms zero-copy
//   GET /missing 404 10 B 0.4 ms stream
//   HEAD /video.mp4 200 0 B 0.9 ms no-body
//   GET /big.iso 200 734003200 B 812.0 ms zero-copy aborted
// or, with --log json, one object per line:
//   {"time":"2026-…Z","method":"GET","path":"/video.mp4","status":200,"bytes":1048576,"ms":3.2,"zeroCopy":true,"aborted":false}
// Bytes are the body length the response announced. Whether the body went by
// sendfile is what serveStatic's onSent reported for this response (see
// createRequestLog); a response it did not report on went by stream or had none.
// The path is the one the client asked for (--single may serve another file).

const NO_BODY_STATUSES = new Set([204, 304])
const COLOURS = { 2: 32, 3: 36, 4: 33, 5: 31 } // green, cyan, yellow, red

function bodyBytes (req, res) {
  if (req.method === 'HEAD' || NO_BODY_STATUSES.has(res.statusCode)) return 0
  return Number(res.getHeader('content-length')) || 0
}

function formatRequestLine ({ method, path, status, bytes, ms, zeroCopy, aborted }, colour = false) {
  const how = bytes === 0 ? 'no-body' : zeroCopy ? 'zero-copy' : 'stream'
  const shownStatus = colour ? `\x1b[${COLOURS[Math.floor(status / 100)] || 0}m${status}\x1b[0m` : status
  const tail = `${ms.toFixed(1)} ms ${how}${aborted ? ' aborted' : ''}`
  return `${method} ${path} ${shownStatus} ${bytes} B ${colour ? `\x1b[2m${tail}\x1b[0m` : tail}`
}

function formatJsonLine (entry) {
  return JSON.stringify({ time: new Date().toISOString(), ...entry, ms: Math.round(entry.ms * 10) / 10 })
}

// Colour when stdout is a terminal, unless NO_COLOR is set; FORCE_COLOR forces it.
function useColour (stream = process.stdout, env = process.env) {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true
  return Boolean(stream.isTTY)
}

// → { onSent, logRequest }: pass onSent to serveStatic, and call
// logRequest(req, res) as each request arrives; it writes one line when the
// response closes, finished or not. `format`: 'text' (default), 'json', or
// 'none' (--quiet: nothing is written).
function createRequestLog (write, { format = 'text', colour = false } = {}) {
  const zeroCopyResponses = new WeakSet()
  if (format === 'none') return { onSent () {}, logRequest () {} }
  return {
    onSent (res, { zeroCopy }) {
      if (zeroCopy) zeroCopyResponses.add(res)
    },
    logRequest (req, res) {
      const start = process.hrtime.bigint()
      const method = req.method
      const path = req.url
      res.once('close', () => {
        const entry = {
          method,
          path,
          status: res.statusCode,
          bytes: bodyBytes(req, res),
          ms: Number(process.hrtime.bigint() - start) / 1e6,
          zeroCopy: zeroCopyResponses.has(res),
          aborted: !res.writableFinished
        }
        write(format === 'json' ? formatJsonLine(entry) : formatRequestLine(entry, colour))
      })
    }
  }
}

module.exports = { createRequestLog, useColour }
