'use strict'

const fs = require('node:fs')

// CPU time and peak memory of one process, read from /proc on Linux:
//   cpu()          → { user, system, mainThread } in milliseconds since start
//   resetPeakRss() → start a new peak-RSS window (Linux ≥ 4.0, clear_refs 5)
//   peakRss()      → the peak resident set size in bytes since the last reset
// For the current process, user/system come from process.cpuUsage()
// (microsecond precision); for another process from /proc/PID/stat (clock
// ticks). The main thread's time comes from its schedstat (nanoseconds).
// Where /proc is missing, mainThread is null and the peak is the lifetime peak.

const TICKS_PER_SECOND = 100 // USER_HZ, 100 on every Linux ABI Node supports

function readText (file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return null
  }
}

function processProbe (pid = process.pid) {
  const self = pid === process.pid

  function mainThreadMs () {
    const schedstat = readText(`/proc/${pid}/task/${pid}/schedstat`)
    return schedstat === null ? null : Number(schedstat.split(' ')[0]) / 1e6
  }

  function userSystemMs () {
    if (self) {
      const { user, system } = process.cpuUsage()
      return { user: user / 1000, system: system / 1000 }
    }
    const stat = readText(`/proc/${pid}/stat`)
    if (stat === null) return { user: null, system: null }
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const toMs = (ticks) => Number(ticks) * 1000 / TICKS_PER_SECOND
    return { user: toMs(fields[11]), system: toMs(fields[12]) }
  }

  return {
    cpu () {
      return { ...userSystemMs(), mainThread: mainThreadMs() }
    },
    resetPeakRss () {
      try {
        fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
      } catch {
        // Not Linux or not permitted: peakRss() reports the lifetime peak.
      }
    },
    peakRss () {
      const status = readText(`/proc/${pid}/status`)
      const match = status && /^VmHWM:\s+(\d+) kB$/m.exec(status)
      if (match) return Number(match[1]) * 1024
      return self ? process.resourceUsage().maxRSS * 1024 : null
    }
  }
}

// The CPU used between two cpu() readings; null where either is unknown.
function cpuDelta (before, after) {
  const delta = {}
  for (const key of ['user', 'system', 'mainThread']) {
    delta[key] = before[key] === null || after[key] === null ? null : after[key] - before[key]
  }
  return delta
}

module.exports = { processProbe, cpuDelta }
