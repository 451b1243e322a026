'use strict'

// The files below a root, for `wildcard: false` (one route per file): relative
// POSIX paths, symbolic links followed (a link loop is walked once), dotfiles
// only when asked, `ignore` glob patterns skipped.

const fs = require('node:fs/promises')
const path = require('node:path')

function ignoredBy (patterns) {
  if (!patterns || patterns.length === 0) return () => false
  const list = [].concat(patterns)
  return (file) => list.some((pattern) => path.posix.matchesGlob(file, pattern))
}

async function listFiles (root, { dot = false, ignore } = {}) {
  const isIgnored = ignoredBy(ignore)
  const files = []
  const seen = new Set()
  async function walk (dir, relative) {
    const real = await fs.realpath(dir)
    if (seen.has(real)) return
    seen.add(real)
    const names = (await fs.readdir(dir)).sort()
    for (const name of names) {
      if (!dot && name[0] === '.') continue
      const file = relative === '' ? name : relative + '/' + name
      let stat
      try {
        stat = await fs.stat(path.join(dir, name))
      } catch {
        continue
      }
      if (stat.isDirectory()) await walk(path.join(dir, name), file)
      else if (!isIgnored(file)) files.push(file)
    }
    seen.delete(real)
  }
  await walk(root, '')
  return files
}

module.exports = { listFiles }
