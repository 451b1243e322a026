#!/usr/bin/env node
'use strict'

// Builds the native addon from src/ into build/Release, which the loader prefers
// to the prebuilds: `npx zcopy build` in a project (bin/commands/build.js runs
// this file; `zcopy.loadError` and `zcopy doctor` name that command), `npm run
// build` in a checkout. For the systems no prebuild serves (another architecture, a glibc
// older than 2.28). zcopy has no install script, so nothing builds on its own.
//
// node-gyp and node-addon-api are build-only (devDependencies): where the package
// is installed without them, npm fetches them into a temporary folder first.
// Needs Python 3, make and a C++17 compiler. Exits 0 when the built binary loads;
// otherwise prints one line (why) and exits 1. zcopy works on streams either way.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { withBindingGyp } = require('./gyp-file')

const root = path.join(__dirname, '..')
const BUILT = path.join(root, 'build', 'Release', 'zcopy.node')
const TOOLS = ['node-gyp', 'node-addon-api']

function say (line) {
  process.stderr.write(`zcopy: ${line}\n`)
}

function resolvable (request) {
  try {
    return require.resolve(request, { paths: [root] })
  } catch {
    return null
  }
}

// The build-only packages at the versions package.json names, fetched by npm into
// `dir` unless the package's own node_modules has them. → node_modules to add
// to NODE_PATH (where binding.gyp's `require('node-addon-api')` looks), or null.
function fetchTools (dir) {
  if (TOOLS.every((name) => resolvable(`${name}/package.json`))) return null
  const { devDependencies } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  const specs = TOOLS.map((name) => `${name}@${devDependencies[name]}`)
  say(`fetching ${specs.join(' and ')} (build-only) with npm`)
  const run = spawnSync('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--ignore-scripts',
    '--no-audit', '--no-fund', '--loglevel=error', ...specs], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (run.status !== 0) {
    throw new Error(`npm could not fetch ${specs.join(' and ')} (${run.error ? run.error.code : `exit code ${run.status}`})`)
  }
  return path.join(dir, 'node_modules')
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

// The headers of the Node running this, when its installation has them
// (<prefix>/include/node, as Node's own tarballs and distributions' packages
// ship them): node-gyp then downloads nothing. Null when they are missing or
// of another version, or when npm's `nodedir` setting already chose.
function localNodeDir () {
  if (process.env.npm_config_nodedir) return null
  const prefix = path.resolve(path.dirname(fs.realpathSync(process.execPath)), '..')
  try {
    const header = fs.readFileSync(path.join(prefix, 'include', 'node', 'node_version.h'), 'utf8')
    const part = (name) => (new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(header) || [])[1]
    if (`v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}` !== process.version) return null
    return fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? prefix : null
  } catch {
    return null
  }
}

// node-gyp rebuild, its output passed through as it comes; resolves with null
// when it worked, else with why it did not.
function nodeGypRebuild (modules) {
  const nodeGyp = modules
    ? path.join(modules, 'node-gyp', 'bin', 'node-gyp.js')
    : resolvable('node-gyp/bin/node-gyp.js')
  const env = { ...process.env }
  if (modules) env.NODE_PATH = [modules, env.NODE_PATH].filter(Boolean).join(path.delimiter)
  const nodeDir = localNodeDir()
  const args = [nodeGyp, 'rebuild', ...(nodeDir ? [`--nodedir=${nodeDir}`] : [])]
  return new Promise((resolve) => {
    let output = ''
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const keep = (to) => (chunk) => {
      to.write(chunk)
      if (output.length < 1 << 20) output += chunk
    }
    child.stdout.on('data', keep(process.stderr))
    child.stderr.on('data', keep(process.stderr))
    child.on('error', (err) => resolve(`could not run node-gyp (${err.code || err.message})`))
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(null)
      const why = cause(output)
      resolve(`${why ? `${why}; ` : ''}node-gyp exited with ${signal || `code ${code}`}`)
    })
  })
}

// Loads the built binary in a child, so one that crashes on load cannot take
// this script down. → null when it loads, else why not.
function loadFailure () {
  const child = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(BUILT)})`], { encoding: 'utf8' })
  if (child.status === 0) return null
  return (child.stderr.split('\n').find((line) => /Error/.test(line)) || `exit ${child.signal || child.status}`).trim()
}

async function main () {
  if (process.platform !== 'linux') {
    say(`zero-copy (sendfile) is Linux-only: on ${process.platform} there is nothing to build and zcopy works on streams`)
    return
  }
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-build-'))
  let failed
  try {
    const modules = fetchTools(temp)
    failed = await withBindingGyp(root, () => nodeGypRebuild(modules))
  } catch (err) {
    failed = err.message
  } finally {
    fs.rmSync(temp, { recursive: true, force: true })
  }
  const refused = failed ? null : loadFailure()
  if (failed || refused) {
    const why = failed ? `the build failed (${failed})` : `the built binary does not load (${refused})`
    say(`${why}; building needs Python 3, make and a C++17 compiler (Debian/Ubuntu: apt-get install python3 make g++; ` +
      'Alpine: apk add python3 make g++). zcopy keeps working: on a prebuild if one fits, else on streams')
    process.exitCode = 1
    return
  }
  say(`built ${path.relative(root, BUILT)}, which zcopy now loads; \`npx zcopy doctor\` checks zero-copy end to end`)
}

main()
