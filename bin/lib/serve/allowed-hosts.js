'use strict'

// DNS rebinding: a web page from evil.example whose name the attacker points at
// 127.0.0.1 may read whatever a loopback-bound server answers, but its requests
// still say `Host: evil.example`. So zcopy serve bound to a loopback address
// answers only Host values that name this machine's loopback (localhost,
// *.localhost, 127.x.y.z, [::1]), as Vite and webpack-dev-server do; other
// binds answer any Host. --allowed-hosts adds names (a leading dot: that domain
// and its subdomains), or turns the check off with `all`.

const net = require('node:net')

const LOOPBACK_NAMES = ['localhost', '.localhost']

// → the host name of a Host / :authority value: no port, no brackets, lower
// case, no trailing dot.
function hostnameOf (value) {
  let host = value.trim().toLowerCase()
  if (host.startsWith('[')) {
    const end = host.indexOf(']')
    host = host.slice(1, end === -1 ? undefined : end)
  } else if (host.indexOf(':') === host.lastIndexOf(':') && host.includes(':')) {
    host = host.slice(0, host.indexOf(':')) // name:port (a bare IPv6 address has several)
  }
  return host.endsWith('.') ? host.slice(0, -1) : host
}

function isLoopbackAddress (host) {
  if (net.isIPv4(host)) return host.startsWith('127.')
  if (net.isIPv6(host)) return host === '::1' || /^::ffff:127\./.test(host)
  return false
}

function matches (hostname, names) {
  return names.some((name) => name.startsWith('.')
    ? hostname === name.slice(1) || hostname.endsWith(name)
    : hostname === name)
}

// `bind`: the address listened on (a name, an IP); `allowed`: the names from
// --allowed-hosts (['all'] for none checked), or undefined. → a check
// (req) → whether it may be answered, or null when every Host is answered.
function hostCheck (bind, allowed) {
  if (allowed !== undefined && allowed.includes('all')) return null
  const loopback = bind === 'localhost' || isLoopbackAddress(bind)
  if (!loopback && allowed === undefined) return null
  const names = [...(allowed ?? []), ...(loopback ? LOOPBACK_NAMES : [])]
  const allows = (value) => {
    const hostname = hostnameOf(value)
    return (loopback && isLoopbackAddress(hostname)) || matches(hostname, names)
  }
  // A client sends the same Host on every request: the last answer is kept.
  let lastValue
  let lastAnswer = false
  return (req) => {
    const value = req.headers[':authority'] ?? req.headers.host
    if (value === undefined) return true // HTTP/1.0 without Host: no page's request
    if (value !== lastValue) {
      lastAnswer = allows(value)
      lastValue = value
    }
    return lastAnswer
  }
}

// --allowed-hosts a,b → ['a', 'b'] (lower case); 'all' stays as is.
function parseAllowedHosts (value) {
  return [].concat(value).flatMap((item) => String(item).split(','))
    .map((item) => item.trim().toLowerCase()).filter(Boolean)
}

module.exports = { hostCheck, hostnameOf, parseAllowedHosts }
