'use strict'

// The compression process (see ./background.js): a child of the server. With
// `--idle` it puts itself in Linux's SCHED_IDLE class (the addon's
// idlePriority(); nice 19 where that is missing): it takes the CPU the server
// leaves. Without (a machine so busy that a job waited 10 s), at nice 10:
// about a tenth of a CPU's share against a busy thread at nice 0. (A session
// of its own, so an autogroup of its own at nice 19, was tried first: Linux
// applies autogroups only to processes in the root cgroup, which services and
// containers are not, and their weight is relative: where the server's own
// group was at nice 19 the two shared the CPU evenly.)
//
// One job at a time, from the IPC channel: { id, encoding, cheap, pid, fd, size }: the
// file open as descriptor `fd` in process `pid` (the server, which keeps it open
// until the answer), reopened through /proc/PID/fd/FD (the same file, whatever
// its name is now), read, fstat'ed after the read, compressed with zlib's
// synchronous API (`cheap`: at the cheaper level) → { id, out, stat, cpuMs }
// (this process's CPU time for the job), { id, short: true } when it had fewer
// bytes, or { id, error }. It exits, without a word, when the server goes (the
// channel closes, or an answer finds it closed); a server that exits kills it
// (./background.js).

const fs = require('node:fs')
const os = require('node:os')
const { idlePriority } = require('../../engine')
const { encodeSync } = require('./encoders')
const { readSource } = require('./read-source')
const { niceFor } = require('./priority')

// → 'idle' (every thread in SCHED_IDLE), 'nice 19', 'nice 10' or 'none'.
function lowerPriority (idle) {
  if (idle && idlePriority !== null && idlePriority() > 0) return 'idle'
  const nice = niceFor(idle)
  try {
    os.setPriority(0, nice)
    return `nice ${nice}`
  } catch {
    return 'none'
  }
}

// The source through the server's descriptor: /proc/PID/fd/FD.
function readServerFile (pid, fd, size) {
  const own = fs.openSync(`/proc/${pid}/fd/${fd}`, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  try {
    return readSource(own, size)
  } finally {
    fs.closeSync(own)
  }
}

// Every message to the server goes through here. The server may be gone
// already (exited, crashed or killed while this process was starting or in the
// middle of a job): then no one is left to answer, and it exits quietly, rather
// than dying of the EPIPE with a stack trace on the stderr it shares with the
// server, seconds after the server itself.
function send (message) {
  if (!process.connected) process.exit(0)
  process.send(message, (err) => {
    if (err) process.exit(0)
  })
}

process.on('disconnect', () => process.exit(0))
process.on('SIGINT', () => {}) // Ctrl-C reaches the whole group: the server decides, and its exit closes the channel
process.on('message', ({ id, encoding, cheap, pid, fd, size }) => {
  try {
    const before = process.cpuUsage()
    const source = readServerFile(pid, fd, size)
    if (source === null) return send({ id, short: true })
    const out = encodeSync(encoding, source.bytes, cheap)
    const used = process.cpuUsage(before)
    send({ id, out, stat: source.stat, cpuMs: (used.user + used.system) / 1000 })
  } catch (err) {
    send({ id, error: { message: err.message, code: err.code } })
  }
})
send({ ready: true, priority: lowerPriority(process.argv.includes('--idle')) })
