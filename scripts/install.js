#!/usr/bin/env node
'use strict'

// zcopy's install script. The native addon is optional: without it zcopy works on
// streams. So this script never fails an install:
//   1. a binary that loads is already there (a prebuild from prebuilds/, or an
//      earlier build in build/): nothing to do;
//   2. otherwise build from source with node-gyp (its output passed through);
//   3. if that fails too, print one line (why, and how to get zero-copy) and exit 0.
// `npm install --build-from-source` (npm_config_build_from_source=true) skips
// step 1. The binary is tried in a child process, so one that crashes on load
// cannot take the install down.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const HOW = 'for zero-copy install Python 3, make and a C++17 compiler ' +
  '(Debian/Ubuntu: apt-get install python3 make g++; Alpine: apk add python3 make g++) ' +
  'and run `npm rebuild zcopy`'

function say (line) {
  process.stderr.write(`zcopy: ${line}\n`)
}

// What node-gyp-build would load at run time: { file } or { error }.
function probe () {
  let loader
  try {
    loader = require.resolve('node-gyp-build', { paths: [root] })
  } catch {
    return { error: 'node-gyp-build (a dependency of zcopy) is missing', missing: true }
  }
  const source = `
    let result
    try {
      const file = require(${JSON.stringify(loader)}).path(${JSON.stringify(root)})
      require(file)
      result = { file }
    } catch (err) {
      result = { error: String(err && err.message).split('\\n')[0] }
    }
    process.stdout.write(JSON.stringify(result))`
  const child = spawnSync(process.execPath, ['-e', source], { cwd: root, encoding: 'utf8' })
  try {
    return JSON.parse(child.stdout)
  } catch {
    return { error: `loading it ended the process (${child.signal || `exit code ${child.status}`})` }
  }
}

// node-gyp: the package's own (a development checkout), else the one npm runs
// install scripts with (npm_config_node_gyp), else whatever is on PATH.
function nodeGypCommand () {
  try {
    return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] })]
  } catch {}
  const fromNpm = process.env.npm_config_node_gyp
  if (fromNpm && fs.existsSync(fromNpm)) return [process.execPath, fromNpm]
  return ['node-gyp']
}

// The usual causes of a failed build, as node-gyp, gyp, make and the compiler say them.
const CAUSES = [
  [/Could not find any Python/i, 'no Python 3'],
  [/not found: make\b/, 'no make'],
  [/^(?=.*(not found|No such file or directory)).*(g\+\+|c\+\+|gcc|\bcc\b|clang)/m, 'no C++ compiler'],
  [/network connectivity|EAI_AGAIN|ENOTFOUND|ETIMEDOUT|ECONNREFUSED/, 'the Node.js headers could not be downloaded']
]

function cause (output) {
  for (const [pattern, text] of CAUSES) if (pattern.test(output)) return text
  const error = /^.*\berror: .*$/m.exec(output)
  return error ? error[0].trim().slice(0, 160) : null
}

// node-gyp rebuild, its output passed through as it comes; resolves with null
// when it worked, else with why it did not.
function build () {
  const [command, ...args] = nodeGypCommand()
  return new Promise((resolve) => {
    let output = ''
    const child = spawn(command, [...args, 'rebuild'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const keep = (to) => (chunk) => {
      to.write(chunk)
      if (output.length < 1 << 20) output += chunk
    }
    child.stdout.on('data', keep(process.stdout))
    child.stderr.on('data', keep(process.stderr))
    child.on('error', (err) => resolve(`could not run node-gyp (${err.code || err.message})`))
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(null)
      const why = cause(output)
      resolve(`the build from source failed (${why ? `${why}; ` : ''}node-gyp exited with ${signal || `code ${code}`})`)
    })
  })
}

async function main () {
  if (process.platform !== 'linux') {
    say(`zero-copy (sendfile) is Linux-only; on ${process.platform} zcopy works on streams`)
    return
  }
  const fromSource = ['true', 'zcopy'].includes(process.env.npm_config_build_from_source)
  const before = fromSource ? null : probe()
  if (before && before.file) return

  const failed = await build()
  const after = failed ? null : probe()
  if (after && after.file) return

  const libc = fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc'
  const target = `linux-${process.arch} (${libc})`
  let prebuild
  if (before === null) prebuild = 'prebuilds skipped (--build-from-source)'
  else if (/No native build was found/.test(before.error)) prebuild = `no prebuilt binary for ${target}`
  else if (before.missing) prebuild = before.error
  else prebuild = `the binary for ${target} did not load (${before.error})`
  const why = failed || `the binary it built did not load (${after.error})`
  say(`no native addon: ${prebuild}, and ${why}; zcopy works without zero-copy, on streams (zeroCopyAvailable === false); ${HOW}`)
}

main()
