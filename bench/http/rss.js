'use strict'

// A server's resident memory, read from /proc, for the memory benchmarks
// (stalled.js, pipelined.js).

const { readFileSync } = require('node:fs')

const SETTLE_MS = 2000 // memory counts as settled once it moved < 1 % in that long
const SETTLE_LIMIT_MS = 30_000

// The resident memory of `pid` and its children, in KiB.
function rssTree (pid) {
  let total = 0
  const stack = [pid]
  while (stack.length > 0) {
    const id = stack.pop()
    try {
      total += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${id}/status`, 'utf8'))[1])
      const children = readFileSync(`/proc/${id}/task/${id}/children`, 'utf8').trim()
      if (children) stack.push(...children.split(/\s+/).map(Number))
    } catch {} // gone meanwhile
  }
  return total
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// The RSS once it stopped moving (< 1 % over SETTLE_MS) and at least holdMs
// passed, or after SETTLE_LIMIT_MS; with the highest reading on the way.
async function settledRss (pid, holdMs = 0) {
  const started = Date.now()
  let last = rssTree(pid)
  let highest = last
  while (Date.now() - started < SETTLE_LIMIT_MS) {
    await sleep(SETTLE_MS)
    const now = rssTree(pid)
    highest = Math.max(highest, now)
    if (Math.abs(now - last) < last / 100 && Date.now() - started >= holdMs) return { rss: now, highest }
    last = now
  }
  return { rss: last, highest }
}

module.exports = { rssTree, settledRss, sleep }
