'use strict'

// The URLs a listening server can be reached at: the address it is bound to,
// or, bound to every interface (0.0.0.0, ::), localhost and each LAN address.

const os = require('node:os')

function hostPart (address) {
  return address.includes(':') ? `[${address}]` : address
}

function urlOf (protocol, address, port) {
  return `${protocol}://${hostPart(address)}:${port}/`
}

// → { local, network: [] }
function urlsOf ({ address, port }, { tls = false, interfaces = os.networkInterfaces() } = {}) {
  const protocol = tls ? 'https' : 'http'
  const wildcard = address === '0.0.0.0' || address === '::'
  if (!wildcard) return { local: urlOf(protocol, address, port), network: [] }
  const network = []
  for (const list of Object.values(interfaces)) {
    for (const info of list || []) {
      if (info.internal) continue
      if (info.family !== 'IPv4' && !(address === '::' && info.family === 'IPv6' && !info.address.startsWith('fe80'))) continue
      network.push(urlOf(protocol, info.address, port))
    }
  }
  return { local: urlOf(protocol, 'localhost', port), network }
}

module.exports = { urlsOf }
