'use strict'

// The process's descriptor limit (RLIMIT_NOFILE, soft), read once from
// /proc/self/limits; null where that cannot be read. Node raises the soft limit
// to the hard one at startup, so this is usually the hard limit.

const fs = require('node:fs')

function readDescriptorLimit () {
  try {
    const line = fs.readFileSync('/proc/self/limits', 'latin1').split('\n').find((text) => text.startsWith('Max open files'))
    const soft = line === undefined ? NaN : Number(line.slice('Max open files'.length).trim().split(/\s+/)[0])
    return Number.isSafeInteger(soft) && soft > 0 ? soft : null
  } catch {
    return null
  }
}

// The open-file cache's default size: a quarter of the descriptors, between 128
// and 8192 (nginx's open_file_cache has no default; this one leaves three
// quarters to connections and the application).
function defaultMaxOpenFiles (limit = readDescriptorLimit()) {
  if (limit === null) return 128
  return Math.min(8192, Math.max(128, Math.floor(limit / 4)))
}

module.exports = { defaultMaxOpenFiles, readDescriptorLimit }
