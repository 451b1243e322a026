'use strict'

// The content codings zcopy knows (RFC 9110 §8.4), the one table of them.
// Each has its name, the token written as it is in Accept-Encoding and
// Content-Encoding, and the suffix of a file holding a file compressed in it:
// a precompressed sibling (file.br) or a variant in the store's folder. The
// order is the server's preference on a tie (br the smallest, then zstd, gzip,
// deflate): every list of codings is taken from this table in this order.
//
// identity (RFC 9110 §8.4.1) is no coding of a file: it names the file itself
// in a negotiation, and has no suffix.

const CODINGS = Object.freeze([
  { name: 'br', suffix: '.br' },
  { name: 'zstd', suffix: '.zst' },
  { name: 'gzip', suffix: '.gz' },
  { name: 'deflate', suffix: '.deflate' }
].map(Object.freeze))

const IDENTITY = 'identity'

const BY_NAME = new Map(CODINGS.map((coding) => [coding.name, coding]))

// → the suffix of a file compressed in the coding `name` ('gzip' → '.gz').
function suffixOf (name) {
  return BY_NAME.get(name).suffix
}

// → the names of those of `names` that are codings, in the server's order of
// preference (a frozen list, made once by each module that uses it).
function codingNames (names) {
  return Object.freeze(CODINGS.filter((coding) => names.includes(coding.name)).map((coding) => coding.name))
}

module.exports = { CODINGS, IDENTITY, codingNames, suffixOf }
