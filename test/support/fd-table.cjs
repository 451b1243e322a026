'use strict'
// This process's open descriptors, as /proc/self/fd shows them: fd → what it
// points at. `openedSince(before)` lists the descriptors open now that were not
// open (to the same thing) in `before`: a leak shows there, while a descriptor
// Node or libuv had open for a moment when `before` was taken and has closed since
// does not count against the code under test (counting them did, on a loaded
// machine: 25 before, 24 after).
const fs = require('node:fs')

function fdTable () {
  const table = new Map()
  for (const name of fs.readdirSync('/proc/self/fd')) {
    try {
      table.set(name, fs.readlinkSync(`/proc/self/fd/${name}`))
    } catch {} // the directory's own descriptor, closed by now
  }
  return table
}

// → ["fd → target", ...] open now and not in `before`
function openedSince (before) {
  const now = fdTable()
  return [...now].filter(([fd, target]) => before.get(fd) !== target).map(([fd, target]) => `${fd} → ${target}`)
}

module.exports = { fdTable, openedSince }
