'use strict'

// What the HTTP benchmark measures: one file of each size (4k … 100m), and the
// many-files cases (many-files.js). Selection from --cases / --sizes, and the
// files each selected case needs.

const { randomBytes } = require('node:crypto')
const { writeFileSync } = require('node:fs')
const { join } = require('node:path')
const manyFiles = require('./many-files')

const SIZES = { '4k': 4 * 1024, '64k': 64 * 1024, '1m': 1024 * 1024, '100m': 100 * 1024 * 1024 }
const GROUPS = { sizes: Object.keys(SIZES), files: Object.keys(manyFiles.CASES) }
const ALL = [...GROUPS.sizes, ...GROUPS.files]

function list (text) {
  return text.split(',').map((name) => name.trim()).filter(Boolean)
    .flatMap((name) => GROUPS[name] ?? [name])
}

// --cases picks cases (default: all; `sizes` and `files` name the groups);
// --sizes alone is the old option (those sizes only), and with --cases it
// narrows the size cases. → case names, in the canonical order.
function selectCases ({ cases, sizes }) {
  let chosen = cases === undefined ? (sizes === undefined ? ALL : list(sizes)) : list(cases)
  if (cases !== undefined && sizes !== undefined) {
    const keep = list(sizes)
    chosen = chosen.filter((name) => !(name in SIZES) || keep.includes(name))
  }
  const unknown = [...chosen, ...(sizes === undefined ? [] : list(sizes))].filter((name) => !ALL.includes(name))
  if (unknown.length) throw new Error(`unknown case ${unknown.join(', ')}: choose from ${ALL.join(', ')}, sizes, files`)
  return ALL.filter((name) => chosen.includes(name))
}

function isFileCase (name) {
  return name in manyFiles.CASES
}

// A many-files case is warmed up for longer, so that the caches (open files,
// headers, bodies) and the JIT meet most of the set before the measurement: at
// 12,000 req/s, 3 s ask for each of 5,000 files about seven times; a fresh zcopy
// does about 4,000 a second in its first seconds, each first request a lookup on
// the thread pool, so part of its measured run still pays them (run.js
// --warm-up 10 measures its steady state).
const FILE_CASE_WARM_UP_SECONDS = 3

// Creates what `name` requests under `root` → { path } (one file) or { script } (wrk
// Lua), with `warmUpSeconds` when the case needs more than the default warm-up.
function prepareCase (root, name) {
  if (isFileCase(name)) return { script: manyFiles.prepare(root, name), warmUpSeconds: FILE_CASE_WARM_UP_SECONDS }
  writeFileSync(join(root, `${name}.bin`), randomBytes(SIZES[name]))
  return { path: `/${name}.bin` }
}

module.exports = { FILE_CASE_WARM_UP_SECONDS, selectCases, isFileCase, prepareCase }
