'use strict'

// The one negotiation of a content coding (RFC 9110 §12.5.3), as negotiator
// makes it: q-values rank the codings (`br;q=0.1, gzip` → gzip), q=0 excludes
// one, `*` stands for every coding not named, names are case-insensitive,
// identity is acceptable unless excluded; on a tie the server's order wins.
//
// negotiator's own function for Accept-Encoding (its lib/encoding.js, what
// Negotiator#encodings calls), taken directly: a request needs no Negotiator
// object, nor a request-shaped one for a header value.
const { preferredEncodings } = require('negotiator/lib/encoding')

// → of `offered` (coding names and maybe identity, in the server's order of
// preference), those the Accept-Encoding value `header` accepts, best first.
// No header (undefined or '') accepts identity alone.
function acceptedCodings (header, offered) {
  return preferredEncodings(header, offered, offered)
}

module.exports = { acceptedCodings }
