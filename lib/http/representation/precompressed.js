'use strict'

// Precompressed siblings (`precompressed: true`): file.br or file.gz, sent as they
// are with Content-Encoding when the client's Accept-Encoding prefers that coding.
//
// The choice is RFC 9110's (12.5.3), made by ./accept-encoding.js: q-values
// rank the codings (`br;q=0.1, gzip` → gzip), q=0 excludes one (`gzip;q=0` →
// never gzip), `*` stands for every coding not named, names are
// case-insensitive, identity is acceptable unless excluded. On a tie the
// server's order wins: br, gzip, then identity. No Accept-Encoding → identity. When nothing is acceptable (`*;q=0`,
// `identity;q=0` with no sibling accepted) the file itself is sent, as everyone
// does, rather than 406.
//
// A path varies with Accept-Encoding exactly when it has a sibling: every response
// for it (identity, 304, 412, 416, HEAD) then carries `Vary: Accept-Encoding`, and a
// path without one does not (a cache keeps a single copy). So both siblings are
// looked up (a stat each, on the thread pool) for every request unless the
// open-file cache's watches vouch for the answer (see ../serving/serve-file.js), and the
// header is parsed only when there is a sibling.

const { badOption } = require('../common')
const { statOrNothing } = require('../files')
const { acceptedCodings } = require('./accept-encoding')
const { IDENTITY, codingNames, suffixOf } = require('./codings')

// The codings `precompressed: true` sends, in the server's order of preference
// (./codings.js), each with its sibling's suffix.
const ENCODINGS = codingNames(['br', 'gzip'])
const CODINGS = ENCODINGS.map((encoding) => ({ encoding, suffix: suffixOf(encoding) }))

// The names a sibling of `file` may have.
function siblingNames (file) {
  return CODINGS.map(({ suffix }) => file + suffix)
}

// → Promise of [{ path, stat, encoding }]: the siblings that are regular files,
// both looked up at once.
function siblingsOf (file) {
  return Promise.all(CODINGS.map(({ encoding, suffix }) => statOrNothing(file + suffix).then(
    (stat) => stat !== undefined && stat.isFile() ? { path: file + suffix, stat, encoding } : null,
    () => null // an unreadable sibling is no sibling: the file itself is sent
  ))).then((found) => found.filter((sibling) => sibling !== null))
}

// The `precompressed` option → false, or the codings whose siblings are sent
// (true: all of ENCODINGS; an array: those of it, as given).
function precompressedEncodings (value) {
  if (value === undefined || value === false) return false
  if (value === true) return ENCODINGS
  if (!Array.isArray(value) || !value.every((encoding) => ENCODINGS.includes(encoding))) {
    throw badOption('precompressed', `a boolean or an array of ${ENCODINGS.map((e) => `'${e}'`).join(', ')}`, value)
  }
  return value.length === 0 ? false : Object.freeze(ENCODINGS.filter((encoding) => value.includes(encoding)))
}

// → { sibling, vary }: of `siblings` (siblingsOf() a file) whose coding is one
// of `encodings`, the one to send instead of the file (or null for the file
// itself), and whether the answer depends on Accept-Encoding (the file has such
// siblings).
function negotiateEncoding (req, allSiblings, encodings = ENCODINGS) {
  const siblings = encodings === ENCODINGS ? allSiblings : allSiblings.filter(({ encoding }) => encodings.includes(encoding))
  if (siblings.length === 0) return { sibling: null, vary: false }
  const available = siblings.map(({ encoding }) => encoding)
  available.push(IDENTITY)
  const best = acceptedCodings(req.headers['accept-encoding'], available)[0]
  return { sibling: siblings.find(({ encoding }) => encoding === best) || null, vary: true }
}

module.exports = { negotiateEncoding, precompressedEncodings, siblingNames, siblingsOf }
