'use strict'

// A native server of the benchmarks (nginx, h2o, Bun), told its port rather
// than reporting one: started with its configuration in a prefix folder of its
// own, ready once the port accepts a connection, stopped with its prefix
// removed. An error names the program when it is not installed, exited before
// listening or never listened.

const { spawn } = require('node:child_process')
const { once } = require('node:events')
const net = require('node:net')
const { rmSync } = require('node:fs')

// `command` `args` with `env` on top of this process's; `prefix`: the folder
// made for it (its configuration, logs), removed when it stops or fails to start; `notInstalled`: the
// message for a missing command; `stopSignal`: how it is asked to stop;
// `quiet`: its stderr is kept and shown only if it fails to start (h2o says
// what it raised its descriptor limit to). → { pid, stop() } once `port`
// accepts connections.
async function startProgram ({ command, args, port, prefix, notInstalled, env = {}, stopSignal = 'SIGTERM', quiet = false }) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', quiet ? 'pipe' : 'inherit'], env: { ...process.env, ...env } })
  let said = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk) => { said = (said + chunk).slice(-4096) })
  const failure = await Promise.race([
    waitForPort(port, child).then((ready) => ready ? null : new Error(`${command} did not start listening within 5 s`)),
    startFailure(child, command, notInstalled)
  ])
  if (failure !== null) {
    child.kill('SIGKILL')
    if (prefix !== undefined) rmSync(prefix, { recursive: true, force: true })
    if (said) failure.message += `:\n${said}`
    throw failure
  }
  return {
    pid: child.pid,
    async stop () {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(stopSignal)
        await once(child, 'exit')
      }
      if (prefix !== undefined) rmSync(prefix, { recursive: true, force: true })
    }
  }
}

// → a promise of the error that stops `child` before it listens: not installed
// (spawn's ENOENT), or exited (a bad configuration, the port taken). Never
// settles otherwise; 'error' is listened to so that it cannot go unhandled.
function startFailure (child, command, notInstalled) {
  return new Promise((resolve) => {
    child.once('error', (err) => resolve(err.code === 'ENOENT' ? new Error(notInstalled) : err))
    child.once('exit', (code, signal) => resolve(new Error(`${command} exited before listening (${signal ?? `exit code ${code}`})`)))
  })
}

// → whether `port` accepts a connection within 5 s; false at once when `child`
// has ended (startFailure says why).
async function waitForPort (port, child) {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null || child.signalCode !== null) return false
    const connected = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (connected) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

module.exports = { startProgram }
