'use strict'

// The kernel features zcopy relies on, in report order, with what each gives
// and what happens without it. The addon's probeKernel() finds out whether each
// works here; without the addon nothing can ask (present: null).
const FEATURES = [
  { key: 'sendfile', label: 'sendfile', what: 'file to socket, pipe or file: the zero-copy path', without: 'every transfer goes by streams' },
  { key: 'copy_file_range', label: 'copy_file_range', what: 'in-kernel file-to-file copy (Linux 4.5+)', without: null },
  { key: 'openat2', label: 'openat2', what: 'confinement under a root checked by the kernel (Linux 5.6+)', without: 'confinement reads /proc/self/fd instead' },
  { key: 'cachestat', label: 'cachestat', what: 'page-cache check: small files skip the thread pool (Linux 6.5+)', without: 'small files go through the thread pool' },
  { key: 'preadv2_nowait', label: 'preadv2 RWF_NOWAIT', what: 'reads that never wait for the disk (Linux 4.14+)', without: null }
]

// → { [key]: { present: true | false | null, code } }; `probeKernel`: the
// addon's (null: none); `dir` is a scratch directory for the probe's unlinked
// files (its filesystem matters for some).
function probeFeatures (probeKernel, dir) {
  if (probeKernel === null) {
    return Object.fromEntries(FEATURES.map(({ key }) => [key, { present: null, code: null }]))
  }
  let found
  try {
    found = probeKernel(dir)
  } catch (err) {
    // The scratch files could not be made: nothing is known, and the code says why.
    return Object.fromEntries(FEATURES.map(({ key }) => [key, { present: null, code: err.code ?? 'ERROR' }]))
  }
  return Object.fromEntries(FEATURES.map(({ key }) => [key, { present: found[key].present, code: found[key].code }]))
}

// Why a probe failed, from its errno name.
function explainCode (code, dir) {
  switch (code) {
    case 'ENOSYS': return 'not in this kernel'
    case 'EPERM': return 'refused (a seccomp profile?)'
    case 'ENOTSUP':
    case 'EOPNOTSUPP':
    case 'EINVAL':
    case 'EXDEV': return `not supported by the filesystem of ${dir}`
    default: return 'failed'
  }
}

module.exports = { FEATURES, probeFeatures, explainCode }
