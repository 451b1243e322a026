'use strict'

const fs = require('node:fs')
const path = require('node:path')

// The first executable called `name` on PATH, or null.
function which (name, env) {
  if (name.includes('/')) return isExecutable(name) ? name : null
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (dir === '') continue
    const file = path.join(dir, name)
    if (isExecutable(file)) return file
  }
  return null
}

function isExecutable (file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

// What node-gyp needs to build the addon: Python 3, make and a C++ compiler
// ($CXX when set, else make's default g++, or c++). Paths, or null when missing.
function buildTools (env = process.env) {
  const compilers = env.CXX ? [env.CXX.trim().split(/\s+/)[0]] : ['g++', 'c++']
  return {
    python3: which('python3', env),
    make: which('make', env),
    cxx: compilers.map((name) => which(name, env)).find(Boolean) || null
  }
}

module.exports = { buildTools }
