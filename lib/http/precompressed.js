'use strict'

// Precompressed siblings (`precompressed: true`): file.br or file.gz, sent as they
// are with Content-Encoding when the client accepts that coding. Brotli first.

const { statOrNothing } = require('./stat')

const CODINGS = [
  { encoding: 'br', suffix: '.br' },
  { encoding: 'gzip', suffix: '.gz' }
]

// Accept-Encoding as coding → q, e.g. 'gzip, br;q=0' → { gzip: 1, br: 0 }.
function qualities (header) {
  const result = new Map()
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((item) => item.trim().toLowerCase())
    if (name === '') continue
    const q = params.find((param) => param.startsWith('q='))
    result.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0)
  }
  return result
}

function accepts (q, coding) {
  return (q.has(coding) ? q.get(coding) : q.get('*') || 0) > 0
}

// → { path, stat, encoding } of the sibling to send instead of `file`, or null.
function precompressedSibling (req, file) {
  const header = req.headers['accept-encoding']
  if (!header) return null
  const q = qualities(header)
  for (const { encoding, suffix } of CODINGS) {
    if (!accepts(q, encoding)) continue
    try {
      const stat = statOrNothing(file + suffix)
      if (stat !== undefined && stat.isFile()) return { path: file + suffix, stat, encoding }
    } catch {
      // an unreadable sibling is no sibling: the file itself is sent
    }
  }
  return null
}

module.exports = { precompressedSibling }
