'use strict'

// The human report: one aligned line per subject, ✓/✗ where there is a verdict,
// and at the end one line saying whether zero-copy works, and if not why and
// how to fix it.

const os = require('node:os')
const { formatSize } = require('../../../tools/size')
const { formatMBps } = require('../../../tools/render/format')
const { FEATURES, explainCode } = require('./features')

const OK = '✓'
const NO = '✗'
const UNKNOWN = '?'

function firstLine (text) {
  return String(text).split('\n')[0].trim()
}

function describePlatform ({ platform, arch, libc }) {
  const lib = libc.family === null ? '' : `, ${libc.family}${libc.version ? ` ${libc.version}` : ''}`
  return `${platform} ${arch}${lib}`
}

function describeThreadPool ({ size, source }, env) {
  const threads = `${size} thread${size === 1 ? '' : 's'}`
  return source === 'default' ? `${threads} (libuv default)` : `${threads} (UV_THREADPOOL_SIZE=${env.UV_THREADPOOL_SIZE})`
}

function describeAddon ({ loaded, from, libc, path, loadError }) {
  const kind = libc ? `${from}, ${libc}` : from
  if (loaded) return [`${OK} loaded (${kind}): ${path}`]
  const where = path ? ` (${kind}): ${path}` : ''
  return [`${NO} not loaded${where}`, `${loadError.code}: ${firstLine(loadError.message)}`]
}

function describeFeatures (features) {
  const entries = Object.values(features)
  if (entries.every(({ present }) => present === null)) {
    const { code } = entries[0]
    return [`${UNKNOWN} unknown (${code === null ? 'no addon' : `the probe failed: ${code}`})`]
  }
  const width = Math.max(...FEATURES.map(({ label }) => label.length))
  return FEATURES.map(({ key, label, what, without }) => {
    const { present, code } = features[key]
    const name = label.padEnd(width)
    if (present) return `${OK} ${name}  ${what}`
    const consequence = without ? `; ${without}` : ''
    return `${NO} ${name}  ${code}: ${explainCode(code, os.tmpdir())}${consequence}`
  })
}

function describeSelfTest (test) {
  if (test.path === null) return `${NO} failed: ${test.error.code ?? 'error'}: ${test.error.message}`
  const how = test.zeroCopy ? 'sendfile (zero-copy)' : 'streams (fallback)'
  const moved = `${how}: ${formatSize(test.bytes)} over loopback TCP`
  if (!test.verified) return `${NO} ${moved}, ${test.error.message}`
  const speed = `in ${test.seconds.toFixed(1)} s, ${formatMBps(test.throughput)} MB/s`
  return `${test.zeroCopy ? OK : NO} ${moved} ${speed}, every byte verified`
}

function describeNativeLane ({ available, refusal }) {
  return available ? `${OK} on in zcopy serve over plain HTTP (--no-native-lane: off)` : `${NO} cannot run here: ${refusal}`
}

function renderReport (report, env = process.env) {
  const rows = [
    ['Node.js', [`${report.node.version} (N-API ${report.node.napi}, ABI ${report.node.abi})`]],
    ['platform', [describePlatform(report)]],
    ['kernel', [report.kernel]],
    ['thread pool', [describeThreadPool(report.threadPool, env)]],
    ['native addon', describeAddon(report.addon)],
    ['kernel features', describeFeatures(report.features)],
    ['self-test', [describeSelfTest(report.selfTest)]],
    ['native lane', [describeNativeLane(report.nativeLane)]]
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  const lines = [`zcopy ${report.zcopy} doctor`, '']
  for (const [label, values] of rows) {
    values.forEach((value, index) => lines.push(`  ${(index === 0 ? label : '').padEnd(width)}  ${value}`))
  }
  lines.push('')
  lines.push(report.zeroCopy ? `${OK} zero-copy works` : `${NO} zero-copy is off: ${report.advice}`)
  return lines.join('\n') + '\n'
}

module.exports = { renderReport }
