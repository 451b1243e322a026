'use strict'

// Where zcopy serve's lines go: stdout (its announcements and the access log),
// stderr (warnings). An output that fails (EPIPE: `zcopy serve | head` done,
// the reader of the pipe killed) ends what is written there, not the server:
// nginx keeps serving when it cannot write its log. A failing stdout is told
// once on stderr; a failing stderr has nowhere to be told.

// → write(line): writes `line` and a newline to `stream` until it fails.
function lineWriter (stream = process.stdout, warnings = process.stderr) {
  let open = true
  warnings.on('error', () => {})
  stream.on('error', (err) => {
    if (!open) return
    open = false
    warnings.write(`zcopy: warning: stdout failed (${err.code || err.message}): nothing more is written there\n`)
  })
  return (line) => {
    if (open) stream.write(line + '\n')
  }
}

module.exports = { lineWriter }
