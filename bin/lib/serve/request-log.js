'use strict'

// One line per request once its response is over:
//   GET /video.mp4 200 1048576 B 3.2 ms zero-copy
//   GET /missing 404 10 B 0.4 ms stream
//   HEAD /video.mp4 200 0 B 0.9 ms no-body
//   GET /logo.svg 200 2048 B 0.3 ms memory
//   GET /app.js 200 41232 B 0.2 ms zero-copy br   (the body's Content-Encoding)
//   GET /app.js 200 249000 B 0.9 ms zero-copy identity (variant pending)
//     (with compression, the file itself while its compressed variant is made)
//   GET /big.iso 200 18350080 B 812.0 ms zero-copy aborted
//   GET /big.iso 200 262144 B 5012.0 ms zero-copy cut at shutdown
// or, with --log json, one object per line:
//   {"time":"2026-…Z","method":"GET","path":"/video.mp4","status":200,"bytes":1048576,"ms":3.2,"zeroCopy":true,"encoding":null,"variantPending":false,"aborted":false,"ended":"complete"}
// Bytes are the body bytes sent: for a file, what serveStatic's onSent reported
// (until the client went away, for an aborted download), otherwise the length the
// response announced (0 if it never finished). How the body went (sendfile, the
// memory cache) is what onSent reported; a response it did not report on went by
// stream or had none. `ended`: complete, aborted (the client went away) or
// shutdown (cut by the server stopping); the text line says the last two.
// The path is the one the client asked for (--single may serve another file),
// written as nginx writes it: a byte outside printable ASCII (C0 and C1
// controls, DEL, any byte from 0x80) and the backslash as \xHH, so that no
// byte a client sends (HTTP/2 lets 0x80-0xFF through in :path; U+0085 is a
// line break, U+009B a terminal's CSI) can end a line or forge one.

// Node decodes a request's target as latin1 (one character per byte), so a
// character's code is the byte the client sent. Anything but printable ASCII
// and the backslash:
const UNSAFE_IN_LOG = /[^\x20-\x5b\x5d-\x7e]/g

function escapeForLog (text) {
  return text.replace(UNSAFE_IN_LOG, (char) => `\\x${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
}

const NO_BODY_STATUSES = new Set([204, 304])
const COLOURS = { 2: 32, 3: 36, 4: 33, 5: 31 } // green, cyan, yellow, red

// Milliseconds since `start` (process.hrtime.bigint()).
function elapsedMs (start) {
  return Number(process.hrtime.bigint() - start) / 1e6
}

function bodyBytes (req, res) {
  if (req.method === 'HEAD' || NO_BODY_STATUSES.has(res.statusCode)) return 0
  return Number(res.getHeader('content-length')) || 0
}

// The Content-Encoding the body was sent in (a compressed variant, a
// precompressed sibling), or null.
function encodingOf (res) {
  const encoding = res.getHeader('Content-Encoding')
  return encoding === undefined || encoding === 'identity' ? null : String(encoding)
}

const ENDINGS = { complete: '', aborted: ' aborted', shutdown: ' cut at shutdown' }

function formatRequestLine ({ method, path, status, bytes, ms, zeroCopy, fromMemory, ended, encoding, variantPending }, colour = false) {
  const coding = encoding ? ` ${encoding}` : variantPending ? ' identity (variant pending)' : ''
  const how = (zeroCopy ? 'zero-copy' : fromMemory ? 'memory' : bytes === 0 ? 'no-body' : 'stream') + coding
  const shownStatus = colour ? `\x1b[${COLOURS[Math.floor(status / 100)] || 0}m${status}\x1b[0m` : status
  const tail = `${ms.toFixed(1)} ms ${how}${ENDINGS[ended]}`
  return `${method} ${path} ${shownStatus} ${bytes} B ${colour ? `\x1b[2m${tail}\x1b[0m` : tail}`
}

// `time`: when the response ended (the native lane's answers, logged in a
// batch), else now.
function formatJsonLine (entry, time = new Date()) {
  return JSON.stringify({ time: time.toISOString(), ...entry, ms: Math.round(entry.ms * 10) / 10 })
}

// Colour when stdout is a terminal, unless NO_COLOR is set; FORCE_COLOR forces it.
function useColour (stream = process.stdout, env = process.env) {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true
  return Boolean(stream.isTTY)
}

// How long stop() waits for the lines of responses still closing (longer than a
// line waits for its report).
const FLUSH_MS = 2000
// What onSent said of a response, kept on it under a symbol of our own (a
// WeakMap entry per request costs the garbage collector more).
const REPORT = Symbol('zcopy serve: what onSent said')
// How long the line of a body cut short waits for onSent's report.
const REPORT_WAIT_MS = 1000

// → { onSent, logRequest, logLaneAnswer, stopping, flush }: pass onSent to
// serveStatic, and call logRequest(req, res) as each request arrives; it writes
// one line when the response closes, finished or not. logLaneAnswer(answer)
// writes the line of an answer the native lane wrote (lib/lane/records.js), as the
// line of the same answer from Node's server reads. Call stopping() when a shutdown begins (what
// is cut from then on is logged as such) and await flush() before exiting: it
// resolves once every response logged so far has its line (or after a second).
// `format`: 'text' (default), 'json', or 'none' (--quiet: nothing is written).
function createRequestLog (write, { format = 'text', colour = false } = {}) {
  const pending = new Set() // responses whose line is not written yet
  const awaiting = new Map() // res closed mid-body → writes its line when onSent reports
  let stopped = false
  let flushed = null
  if (format === 'none') return { onSent () {}, logRequest () {}, logLaneAnswer: null, stopping () {}, flush: async () => {} }

  function settle () {
    if (pending.size === 0 && flushed !== null) flushed()
  }

  function writeEntry (entry, time) {
    write(format === 'json' ? formatJsonLine(entry, time) : formatRequestLine(entry, colour))
  }

  return {
    onSent (res, sent) {
      res[REPORT] = sent
      const waiting = awaiting.get(res)
      if (waiting !== undefined) waiting()
    },
    logRequest (req, res) {
      const start = process.hrtime.bigint()
      const method = req.method
      const path = escapeForLog(req.url)
      pending.add(res)
      // On the next turn: a body sent with its head (the memory cache) can close
      // the response before its onSent report has run. A body cut short reports
      // once its transfer has stopped (a read in flight ends first): its line
      // waits for that report, at most REPORT_WAIT_MS.
      res.once('close', () => {
        const ms = elapsedMs(start)
        const cut = stopped
        const writeLine = (ms, cut) => {
          awaiting.delete(res)
          logEntry(ms, cut)
          pending.delete(res)
          settle()
        }
        setImmediate(() => {
          // A body the native lane sends on alone, the response ended: the
          // line waits for the body's end, and says how it went.
          const finished = res[REPORT]?.finished
          if (finished !== undefined) {
            return finished.then(({ bytes, complete }) => {
              res[REPORT] = { ...res[REPORT], bytes, complete }
              writeLine(elapsedMs(start), stopped)
            })
          }
          if (res[REPORT] !== undefined || res.writableFinished || !res.headersSent) return writeLine(ms, cut)
          const timer = setTimeout(() => writeLine(ms, cut), REPORT_WAIT_MS)
          awaiting.set(res, () => {
            clearTimeout(timer)
            writeLine(ms, cut)
          })
        })
      })
      const logEntry = (ms, cut) => {
        const report = res[REPORT]
        const finished = res.writableFinished && (!report || report.complete)
        const entry = {
          method,
          path,
          status: res.statusCode,
          bytes: report ? report.bytes : finished ? bodyBytes(req, res) : 0,
          ms,
          zeroCopy: Boolean(report && report.zeroCopy),
          fromMemory: Boolean(report && report.fromMemory),
          encoding: encodingOf(res),
          variantPending: Boolean(report && report.variantPending),
          aborted: !finished,
          ended: finished ? 'complete' : cut ? 'shutdown' : 'aborted'
        }
        writeEntry(entry)
      }
    },
    // The lane replays no answer sent while a variant was pending
    // (replay-offer.js); its coding comes with the record (lib/lane/records.js).
    logLaneAnswer ({ time, method, target, status, bytes, ms, zeroCopy, fromMemory, encoding, ended }) {
      const entry = {
        method,
        path: escapeForLog(target),
        status,
        bytes,
        ms,
        zeroCopy,
        fromMemory,
        encoding,
        variantPending: false,
        aborted: ended !== 'complete',
        ended
      }
      writeEntry(entry, new Date(time))
    },
    stopping () {
      stopped = true
    },
    flush () {
      if (pending.size === 0) return Promise.resolve()
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, FLUSH_MS)
        flushed = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }
}

module.exports = { createRequestLog, useColour }
