'use strict'

// One measurement in a fresh Node process, so that its CPU time, peak RSS,
// heap and JIT state are its own and not left over from the one before.
//
// As a child (forked by measureInChildProcess): receives { mode, method,
// file, size, concurrency, duration, iterations } over IPC, replies
// { result } or { error }, and exits; it also exits if the parent goes away.

const { fork } = require('node:child_process')
const { onCleanup } = require('../cleanup')

function measureInChildProcess (options) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    // Interrupted: stop it before the temporary files it uses are removed.
    const stop = onCleanup(() => child.kill('SIGKILL'))
    let reply = null
    child.once('message', (message) => { reply = message })
    child.once('exit', (code) => {
      stop()
      if (reply && reply.result) resolve(reply.result)
      else reject(new Error(reply ? reply.error : `the measurement process exited with code ${code}`))
    })
    child.send(options)
  })
}

async function measureHere (options) {
  const { loadZcopy } = require('../load-zcopy')
  const { MODES } = require('./modes')
  const zcopy = loadZcopy()
  return MODES[options.mode].run({ ...options, zcopy })
}

if (require.main === module) {
  process.on('disconnect', () => process.exit(1))
  process.once('message', (options) => {
    measureHere(options).then(
      (result) => process.send({ result }, () => process.exit(0)),
      (err) => process.send({ error: err.message }, () => process.exit(1))
    )
  })
}

module.exports = { measureInChildProcess }
