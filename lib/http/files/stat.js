'use strict'

// Name lookups on a request's miss path, on the thread pool: a stat on a local
// disk is a microsecond in the dentry cache, but one on a network file system (or
// a cold one on a busy disk) may wait for the server, and the event loop must not
// (nginx blocks its worker there; zcopy pays a pool round trip per miss instead).
// A request for a remembered path (see ./remembered-paths) makes none of these calls.
// Errors are fs.stat's callback errors, as send meets them: no JavaScript frames
// in the stack.

const fs = require('node:fs')
const { promisify } = require('node:util')

// → Promise<fs.Stats>; rejects with the fs error.
const statOf = promisify(fs.stat)

// → Promise<fs.Stats> of the name itself (a symbolic link is not followed).
const lstatOf = promisify(fs.lstat)

// → Promise<fs.Stats>, or of undefined when nothing is there (ENOENT, ENOTDIR);
// other failures reject.
function statOrNothing (file) {
  return statOf(file).catch((err) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined
    throw err
  })
}

// All a lookup needs to know of a name that is no regular file (see
// ./locate-file): whether it is a directory. For a miss whose pool job found it
// out (OpenFileCache.statToOpen()) in place of its fs.Stats.
const DIRECTORY_NAME = Object.freeze({ isFile: () => false, isDirectory: () => true })
const OTHER_NAME = Object.freeze({ isFile: () => false, isDirectory: () => false })

const kindOf = (directory) => directory ? DIRECTORY_NAME : OTHER_NAME

// Whether stats `a` and `b` are of the same file, unchanged: same device, inode,
// size, mtime and ctime.
function sameFile (a, b) {
  return a === b || (a.ino === b.ino && a.dev === b.dev && a.size === b.size &&
    a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs)
}

module.exports = { kindOf, lstatOf, sameFile, statOf, statOrNothing }
