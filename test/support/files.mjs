// Temporary files with known contents, and their hashes.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export function sha256 (data) {
  return crypto.createHash('sha256').update(data).digest('hex')
}

export function makeTempDir (prefix = 'zcopy-test-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

// A temporary folder holding `files` (relative name → contents, folders made
// as needed): → its path.
export function makeRoot (files, prefix = 'zcopy-serve-') {
  const root = makeTempDir(prefix)
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
  return root
}

// Every .js file below `dir`, as paths.
export function jsFilesUnder (dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return jsFilesUnder(full)
    return entry.name.endsWith('.js') ? [full] : []
  })
}

export function removeTempDir (dir) {
  fs.rmSync(dir, { recursive: true, force: true })
}

// A file of `size` random bytes; returns its path and contents.
export function makeFile (dir, name, size) {
  const file = path.join(dir, name)
  const data = crypto.randomBytes(size)
  fs.writeFileSync(file, data)
  return { file, data }
}

export function openFdCount () {
  return fs.readdirSync('/proc/self/fd').length
}

// The process's open descriptors, as `fd → what it points at`.
export function openFds () {
  const fds = new Map()
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      fds.set(fd, fs.readlinkSync(`/proc/self/fd/${fd}`))
    } catch {} // closed meanwhile (the readdir's own descriptor)
  }
  return fds
}

// The descriptors open now that were not open (to the same thing) at
// `before` (an openFds()): what leaked. One closed meanwhile by Node or the
// test runner is not a leak and is not counted.
export function fdsOpenedSince (before) {
  return [...openFds()].filter(([fd, target]) => before.get(fd) !== target).map(([fd, target]) => `${fd} → ${target}`)
}
