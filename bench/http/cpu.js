'use strict'

// CPU time of a server's processes, from /proc (Linux): how much work one request
// costs the server, user and system time apart. Requests per second on a small VM
// also carry the cost of waking an idle client for every response; CPU per
// request is the server's own bill.

const { readdirSync, readFileSync } = require('node:fs')

// Linux reports /proc times in USER_HZ, 100 on every mainstream architecture.
const TICKS_PER_SECOND = 100

// → the fields of /proc/PID/stat after the command name (the first is the
// state, field 3), or null once the process is gone or without /proc.
function statFields (pid) {
  let text
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  // The command name, in parentheses, may itself hold spaces and parentheses.
  return text.slice(text.lastIndexOf(')') + 2).split(' ')
}

// → { pid, ppid, user, system } (seconds) of a live process, or null once it is gone.
function processStat (pid) {
  const fields = statFields(pid)
  if (fields === null) return null
  return {
    pid: Number(pid),
    ppid: Number(fields[1]),
    user: Number(fields[11]) / TICKS_PER_SECOND,
    system: Number(fields[12]) / TICKS_PER_SECOND
  }
}

// The live direct children of `pid` (nginx's workers): their processStat()s.
function childrenOf (pid) {
  const children = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = processStat(name)
    if (stat !== null && stat.ppid === pid) children.push(stat)
  }
  return children
}

// → { user, system } seconds used so far by `pid` and its live children, or null
// when `pid` is gone or /proc is not there.
function cpuTime (pid) {
  const root = processStat(pid)
  if (root === null) return null
  const total = { user: root.user, system: root.system }
  for (const child of childrenOf(pid)) {
    total.user += child.user
    total.system += child.system
  }
  return total
}

// → { user, system } seconds used so far by this process's children that have
// ended and been waited for (/proc/self/stat's cutime and cstime): read before
// and after a load generator runs, the difference is its CPU time. null without
// /proc.
function endedChildrenCpuTime () {
  const fields = statFields('self')
  if (fields === null) return null
  return { user: Number(fields[13]) / TICKS_PER_SECOND, system: Number(fields[14]) / TICKS_PER_SECOND }
}

// → { user, system } microseconds per request between two cpuTime() readings.
function perRequest (before, after, requests) {
  if (before === null || after === null || requests === 0) return null
  return {
    user: (after.user - before.user) * 1e6 / requests,
    system: (after.system - before.system) * 1e6 / requests
  }
}

module.exports = { childrenOf, cpuTime, endedChildrenCpuTime, perRequest }
