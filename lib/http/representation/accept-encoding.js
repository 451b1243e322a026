'use strict'

// The one negotiation of a content coding (RFC 9110 §12.5.3), as negotiator
// makes it: q-values rank the codings (`br;q=0.1, gzip` → gzip), q=0 excludes
// one, `*` stands for every coding not named, names are case-insensitive,
// identity is acceptable unless excluded; on a tie the server's order wins.
//
// negotiator's public API (a package's internal files may move under a minor
// version). Its object is light: two allocations per call, and the variant
// store keeps the ranking per header value.
const Negotiator = require('negotiator')

// → of `offered` (coding names and maybe identity, in the server's order of
// preference), those the Accept-Encoding value `header` accepts, best first.
// No header (undefined or '') accepts identity alone.
function acceptedCodings (header, offered) {
  return new Negotiator({ headers: { 'accept-encoding': header } }).encodings(offered, { preferred: offered })
}

module.exports = { acceptedCodings }
