'use strict'

// The addon's gyp file is zcopy.gyp, not binding.gyp: a package with binding.gyp
// at its root gets an implicit `node-gyp rebuild` install script from npm (on an
// install from a lockfile even with "gypfile": false, npm 11.19) and is flagged
// for a build by pnpm, so npm would warn about an unapproved install script and
// run a build where a prebuild serves. node-gyp reads only binding.gyp, in the
// directory it runs in: `withBindingGyp` puts a copy there for one build (an
// async function) and removes it after, whatever happened.

const fs = require('node:fs')
const path = require('node:path')

const GYP_FILE = 'zcopy.gyp'

async function withBindingGyp (root, build) {
  const copy = path.join(root, 'binding.gyp')
  fs.copyFileSync(path.join(root, GYP_FILE), copy)
  try {
    return await build()
  } finally {
    fs.rmSync(copy, { force: true })
  }
}

module.exports = { GYP_FILE, withBindingGyp }
