'use strict'

// Reads what a shared object needs from the system, the way `readelf -h -d -V`
// shows it, without binutils: the ELF machine, the DT_NEEDED libraries and the
// symbol versions per library (.gnu.version_r). Used by the prebuild script and
// by the test that holds the committed prebuilds to the glibc floor.

const fs = require('node:fs')

const MACHINES = { 62: 'x86_64', 183: 'aarch64' }
const SHT_DYNAMIC = 6
const SHT_GNU_VERNEED = 0x6ffffffe
const DT_NEEDED = 1

// The newest version of each runtime a prebuild may need. glibc 2.28 is Debian 10/11,
// Ubuntu 20.04 (2.31) and RHEL 8's floor, and Node 20's own; libstdc++ from GCC 8
// (RHEL 8; Debian 11 has GCC 10).
const FLOOR = {
  GLIBC: '2.28',
  GLIBCXX: '3.4.25',
  CXXABI: '1.3.11'
}

function readElf (file) {
  const buf = fs.readFileSync(file)
  if (buf.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file}: not an ELF file`)
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error(`${file}: not a 64-bit little-endian ELF file`)
  const machine = buf.readUInt16LE(18)
  const shoff = Number(buf.readBigUInt64LE(40))
  const shentsize = buf.readUInt16LE(58)
  const shnum = buf.readUInt16LE(60)
  const sections = []
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize
    sections.push({
      type: buf.readUInt32LE(at + 4),
      offset: Number(buf.readBigUInt64LE(at + 24)),
      size: Number(buf.readBigUInt64LE(at + 32)),
      link: buf.readUInt32LE(at + 40),
      info: buf.readUInt32LE(at + 44)
    })
  }
  const string = (section, offset) => {
    const start = sections[section.link].offset + offset
    return buf.toString('latin1', start, buf.indexOf(0, start))
  }

  const needed = []
  for (const section of sections.filter((s) => s.type === SHT_DYNAMIC)) {
    for (let at = section.offset; at < section.offset + section.size; at += 16) {
      const tag = buf.readBigUInt64LE(at)
      if (tag === 0n) break
      if (tag === BigInt(DT_NEEDED)) needed.push(string(section, Number(buf.readBigUInt64LE(at + 8))))
    }
  }

  const versions = {} // library → [version names]
  for (const section of sections.filter((s) => s.type === SHT_GNU_VERNEED)) {
    let entry = section.offset
    for (let i = 0; i < section.info; i++) {
      const count = buf.readUInt16LE(entry + 2)
      const library = string(section, buf.readUInt32LE(entry + 4))
      const names = versions[library] ??= []
      let aux = entry + buf.readUInt32LE(entry + 8)
      for (let j = 0; j < count; j++) {
        names.push(string(section, buf.readUInt32LE(aux + 8)))
        aux += buf.readUInt32LE(aux + 12)
      }
      entry += buf.readUInt32LE(entry + 12)
    }
  }
  return { machine: MACHINES[machine] || `unknown (${machine})`, needed, versions }
}

function compareVersions (a, b) {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0)
    if (d !== 0) return d
  }
  return 0
}

// The newest version of each prefix (GLIBC, GLIBCXX, CXXABI, GCC) the binary needs.
function newestNeeds (versions) {
  const newest = {}
  for (const name of Object.values(versions).flat()) {
    const match = /^([A-Z]+)_([\d.]+)$/.exec(name)
    if (!match) continue
    const [, prefix, version] = match
    if (!newest[prefix] || compareVersions(version, newest[prefix]) > 0) newest[prefix] = version
  }
  return newest
}

// Every need above the floor, as "GLIBC_2.33" strings; [] when the binary is fine.
function aboveFloor (versions, floor = FLOOR) {
  const newest = newestNeeds(versions)
  return Object.entries(floor)
    .filter(([prefix, limit]) => newest[prefix] && compareVersions(newest[prefix], limit) > 0)
    .map(([prefix]) => `${prefix}_${newest[prefix]}`)
}

module.exports = { readElf, newestNeeds, aboveFloor, compareVersions, FLOOR }
