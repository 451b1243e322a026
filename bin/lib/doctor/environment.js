'use strict'

const os = require('node:os')

// The C library Node runs on: glibc's version from the diagnostic report, musl
// recognised by its loader among the shared objects (the report has no version
// for it), null elsewhere.
function libcOf (report) {
  const glibc = report.header.glibcVersionRuntime
  if (glibc) return { family: 'glibc', version: glibc }
  if ((report.sharedObjects || []).some((file) => /(^|\/)(ld-musl|libc\.musl)/.test(file))) {
    return { family: 'musl', version: null }
  }
  return { family: null, version: null }
}

function diagnosticReport () {
  const excludeNetwork = process.report.excludeNetwork
  process.report.excludeNetwork = true // no DNS lookups for a report we read two fields of
  try {
    return process.report.getReport()
  } finally {
    process.report.excludeNetwork = excludeNetwork
  }
}

// What the binary has to fit: Node and its N-API level, OS, CPU, C library, kernel.
function environment () {
  return {
    node: { version: process.version, napi: Number(process.versions.napi), abi: process.versions.modules },
    platform: process.platform,
    arch: process.arch,
    libc: libcOf(diagnosticReport()),
    kernel: os.release()
  }
}

module.exports = { environment, libcOf }
