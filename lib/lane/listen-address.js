'use strict'

// Where the lane listens: `host` resolved as Node's server.listen resolves it
// (dns.lookup, the first address), then `bind(address, ipv6)` → the port.
// → Promise of an address like server.address()'s.

const dns = require('node:dns')

async function listenAddress (host, bind) {
  const { address, family } = await dns.promises.lookup(host)
  return { address, family: family === 6 ? 'IPv6' : 'IPv4', port: bind(address, family === 6) }
}

module.exports = { listenAddress }
