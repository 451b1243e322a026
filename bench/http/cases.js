'use strict'

// What the HTTP benchmark measures: one file of each size (4k … 100m), the
// many-files cases (many-files.js), and (run.js only) `revalidate-4k`: the
// 4 KiB file asked for again with the validator each server gave it
// (revalidate.js), and `compressed`: a 212 KiB JavaScript bundle asked for as a
// browser does (Accept-Encoding: gzip, deflate, br), served by its own servers
// (compressed-servers.js). Selection from --cases / --sizes, and the files each
// selected case needs.

const { randomBytes } = require('node:crypto')
const { existsSync, mkdirSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')
const { ACCEPT, BUNDLE, writeFolders } = require('./compressed-servers')
const manyFiles = require('./many-files')

const SIZES = { '4k': 4 * 1024, '64k': 64 * 1024, '1m': 1024 * 1024, '100m': 100 * 1024 * 1024 }
const GROUPS = { sizes: Object.keys(SIZES), files: Object.keys(manyFiles.CASES) }
const ALL = [...GROUPS.sizes, ...GROUPS.files]
const COMPRESSED = 'compressed'
const REVALIDATE = 'revalidate-4k'

function list (text) {
  return text.split(',').map((name) => name.trim()).filter(Boolean)
    .flatMap((name) => GROUPS[name] ?? [name])
}

// --cases picks cases (default: all; `sizes` and `files` name the groups);
// --sizes alone is the old option (those sizes only), and with --cases it
// narrows the size cases. `revalidate`, `compressed`: the caller (run.js)
// measures those cases too (in `all` unless `sizes` alone is given).
// → case names, in the canonical order.
function selectCases ({ cases, sizes }, { revalidate = false, compressed = false } = {}) {
  const all = [...ALL, ...(revalidate ? [REVALIDATE] : []), ...(compressed ? [COMPRESSED] : [])]
  let chosen = cases === undefined ? (sizes === undefined ? all : list(sizes)) : list(cases)
  if (cases !== undefined && sizes !== undefined) {
    const keep = list(sizes)
    chosen = chosen.filter((name) => !(name in SIZES) || keep.includes(name))
  }
  const unknown = [...chosen, ...(sizes === undefined ? [] : list(sizes))].filter((name) => !all.includes(name))
  if (unknown.length) throw new Error(`unknown case ${unknown.join(', ')}: choose from ${all.join(', ')}, sizes, files`)
  return all.filter((name) => chosen.includes(name))
}

function isFileCase (name) {
  return name in manyFiles.CASES
}

function isRevalidateCase (name) {
  return name === REVALIDATE
}

function isCompressedCase (name) {
  return name === COMPRESSED
}

// The compressed case's servers: the run.js name → compressed-servers.js's.
// zcopy serve with its defaults (compress on) on a folder without siblings,
// against the fastest peers, which need siblings built beforehand.
const COMPRESSED_SERVERS = {
  'zcopy serve': 'zcopy-serve',
  'zcopy serve --no-native-lane': 'zcopy-serve-node',
  'nginx gzip_static': 'nginx-gzip-static',
  'h2o send-compressed': 'h2o-send-compressed',
  'Caddy precompressed': 'caddy-precompressed'
}

// A many-files case is warmed up for longer, so that the caches (open files,
// headers, bodies) and the JIT meet most of the set before the measurement: at
// 12,000 req/s, 3 s ask for each of 5,000 files about seven times; a fresh zcopy
// does about 4,000 a second in its first seconds, each first request a lookup on
// the thread pool, so part of its measured run still pays them (run.js
// --warm-up 10 measures its steady state).
const FILE_CASE_WARM_UP_SECONDS = 3

// A wrk Lua script that asks with a browser's Accept-Encoding.
function acceptScript (root) {
  const script = join(root, 'accept-encoding.lua')
  writeFileSync(script, `wrk.headers["Accept-Encoding"] = "${ACCEPT}"\n`)
  return script
}

// Creates what `name` requests under `root` → { path } (one file) or { script } (wrk
// Lua), with `warmUpSeconds` when the case needs more than the default warm-up;
// the revalidate case: { path, revalidate: true } (the 4k case's file, written
// once for both); the compressed case: { path, script, folders: { plain,
// siblings }, servers }.
function prepareCase (root, name) {
  if (isFileCase(name)) return { script: manyFiles.prepare(root, name), warmUpSeconds: FILE_CASE_WARM_UP_SECONDS }
  if (isCompressedCase(name)) {
    const base = join(root, COMPRESSED)
    mkdirSync(base, { mode: 0o755 })
    const { plain, siblings, size } = writeFolders(base)
    return { path: BUNDLE, script: acceptScript(root), size, folders: { plain, siblings }, servers: COMPRESSED_SERVERS, warmUpSeconds: FILE_CASE_WARM_UP_SECONDS }
  }
  if (isRevalidateCase(name)) {
    const file = join(root, '4k.bin')
    if (!existsSync(file)) writeFileSync(file, randomBytes(SIZES['4k']))
    return { path: '/4k.bin', revalidate: true }
  }
  writeFileSync(join(root, `${name}.bin`), randomBytes(SIZES[name]))
  return { path: `/${name}.bin` }
}

module.exports = { COMPRESSED, COMPRESSED_SERVERS, FILE_CASE_WARM_UP_SECONDS, selectCases, isCompressedCase, isFileCase, isRevalidateCase, prepareCase }
