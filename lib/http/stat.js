'use strict'

// Name lookups on a request's miss path, on the thread pool: a stat on a local
// disk is a microsecond in the dentry cache, but one on a network file system (or
// a cold one on a busy disk) may wait for the server, and the event loop must not
// (nginx blocks its worker there; zcopy pays a pool round trip per miss instead).
// A request for a remembered path (see ./file-cache) makes none of these calls.
// Errors are fs.stat's, as send meets them: no JavaScript frames in the stack.

const fs = require('node:fs')

// → Promise<fs.Stats>; rejects with the fs error.
function statOf (file) {
  return new Promise((resolve, reject) => {
    fs.stat(file, (err, stat) => err ? reject(err) : resolve(stat))
  })
}

// → Promise<fs.Stats>, or of undefined when nothing is there (ENOENT, ENOTDIR);
// other failures reject.
function statOrNothing (file) {
  return new Promise((resolve, reject) => {
    fs.stat(file, (err, stat) => {
      if (err === null) resolve(stat)
      else if (err.code === 'ENOENT' || err.code === 'ENOTDIR') resolve(undefined)
      else reject(err)
    })
  })
}

// → Promise<fs.Stats> of the name itself (a symbolic link is not followed).
function lstatOf (file) {
  return new Promise((resolve, reject) => {
    fs.lstat(file, (err, stat) => err ? reject(err) : resolve(stat))
  })
}

module.exports = { lstatOf, statOf, statOrNothing }
