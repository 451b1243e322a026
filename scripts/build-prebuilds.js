#!/usr/bin/env node
'use strict'

// `npm run build:prebuilds [-- linux-x64 linux-arm64]`: builds the N-API prebuilds
// shipped in the package (prebuildify --napi --strip --tag-libc, the layout
// node-gyp-build loads), checks each binary's ELF machine and the newest glibc and
// libstdc++ versions it needs against the floor in scripts/elf.js, and records in
// prebuilds/manifest.json which sources each one was built from (a test fails when
// src/ changed since). linux-arm64 is cross-compiled on an x64 machine when
// aarch64-linux-gnu-g++ is installed (apt-get install g++-aarch64-linux-gnu).
// Run it through npm, which points node-gyp at the local Node headers (nodedir).

const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { readElf, newestNeeds, aboveFloor } = require('./elf')

const root = path.join(__dirname, '..')
const manifestPath = path.join(root, 'prebuilds', 'manifest.json')

const TARGETS = {
  'linux-x64': { arch: 'x64', machine: 'x86_64', cross: 'x86_64-linux-gnu-' },
  'linux-arm64': { arch: 'arm64', machine: 'aarch64', cross: 'aarch64-linux-gnu-' }
}

// What a prebuild is made of: binding.gyp, every file in src/, and the
// node-addon-api headers' version.
function sourcesHash () {
  const hash = crypto.createHash('sha256')
  const files = ['binding.gyp', ...fs.readdirSync(path.join(root, 'src')).sort().map((f) => `src/${f}`)]
  for (const file of files) {
    hash.update(`${file}\0`)
    hash.update(fs.readFileSync(path.join(root, file)))
    hash.update('\0')
  }
  hash.update(`node-addon-api@${require('node-addon-api/package.json').version}`)
  return hash.digest('hex')
}

function readManifest () {
  try {
    return JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
  } catch {
    return { prebuilds: {} }
  }
}

function onPath (command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

function build (name) {
  const target = TARGETS[name]
  const native = os.arch() === target.arch
  const env = { ...process.env }
  let strip = 'strip'
  if (!native) {
    if (!onPath(`${target.cross}g++`)) throw new Error(`${name}: no ${target.cross}g++ to cross-compile with`)
    Object.assign(env, { CC: `${target.cross}gcc`, CXX: `${target.cross}g++`, LINK: `${target.cross}g++` })
    strip = `${target.cross}strip`
  }
  const prebuildify = require.resolve('prebuildify/bin.js')
  const args = [prebuildify, '--napi', '--strip', '--tag-libc', `--arch=${target.arch}`,
    `--strip-bin=${strip}`, `--target=${process.versions.node}`]
  console.error(`build:prebuilds: ${name}${native ? '' : ` (cross, ${target.cross}g++)`}`)
  const run = spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' })
  if (run.status !== 0) throw new Error(`${name}: prebuildify exited with ${run.status}`)

  const file = `${name}/zcopy.glibc.node`
  const full = path.join(root, 'prebuilds', file)
  const elf = readElf(full)
  if (elf.machine !== target.machine) throw new Error(`${file}: ELF machine ${elf.machine}, expected ${target.machine}`)
  const above = aboveFloor(elf.versions)
  if (above.length) throw new Error(`${file} needs ${above.join(', ')}: above the floor in scripts/elf.js`)
  const bytes = fs.readFileSync(full)
  return [file, {
    machine: elf.machine,
    needs: newestNeeds(elf.versions),
    bytes: bytes.length,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    sources: sourcesHash()
  }]
}

function main (names) {
  const unknown = names.filter((n) => !TARGETS[n])
  if (unknown.length) throw new Error(`unknown target ${unknown.join(', ')}; known: ${Object.keys(TARGETS).join(', ')}`)
  const manifest = readManifest()
  for (const name of names) {
    const [file, entry] = build(name)
    manifest.prebuilds[file] = entry
    fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
    console.error(`build:prebuilds: prebuilds/${file}: ${entry.bytes} bytes, ${entry.machine}, needs ${Object.entries(entry.needs).map(([k, v]) => `${k}_${v}`).join(' ')}`)
  }
}

if (require.main === module) {
  try {
    main(process.argv.length > 2 ? process.argv.slice(2) : Object.keys(TARGETS))
  } catch (err) {
    console.error(`build:prebuilds: ${err.message}`)
    process.exitCode = 1
  }
}

module.exports = { sourcesHash, TARGETS }
