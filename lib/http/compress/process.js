'use strict'

// The compression process (see ./background.js): a child of the server, started
// detached, so in a session of its own. On Linux a session is an autogroup, and
// the CPU is shared between autogroups first: a thread of the server's own, even
// at SCHED_IDLE, is charged to the server's group, and on a busy machine each
// time it runs the server's threads wake later (1.5–1.8 ms more at the median,
// measured). Here it is charged to its own group, which it lowers to nice 19
// (/proc/self/autogroup), as it lowers itself (setpriority): it takes the CPU
// the server leaves.
//
// One job at a time, from the IPC channel: { id, encoding, pid, fd, size }: the
// file open as descriptor `fd` in process `pid` (the server, which keeps it open
// until the answer), reopened through /proc/PID/fd/FD (the same file, whatever
// its name is now), read, fstat'ed after the read, compressed with zlib's
// synchronous API → { id, out, stat }, { id, short: true } when it had fewer
// bytes, or { id, error }. It exits when the server goes (the channel closes).

const fs = require('node:fs')
const os = require('node:os')
const { encodeSync } = require('./encoders')
const { readSource } = require('./read-source')

function lowerPriority () {
  let lowered = 'none'
  try {
    os.setPriority(0, 19)
    lowered = 'nice'
  } catch {}
  try {
    fs.writeFileSync('/proc/self/autogroup', '19')
    lowered = 'autogroup'
  } catch {}
  return lowered
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

process.on('disconnect', () => process.exit(0))
process.on('message', ({ id, encoding, pid, fd, size }) => {
  try {
    const source = readServerFile(pid, fd, size)
    if (source === null) return process.send({ id, short: true })
    process.send({ id, out: encodeSync(encoding, source.bytes), stat: source.stat })
  } catch (err) {
    process.send({ id, error: { message: err.message, code: err.code } })
  }
})
process.send({ ready: true, priority: lowerPriority() })
